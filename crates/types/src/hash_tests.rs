//! Expected values: PostgreSQL 15.18 printed every number here and in `hash_cases.rs`, the
//! statement that produced it in the comment above.

use super::*;
use crate::array::Array;
use crate::io::parse_text;
use crate::record::Record;
use crate::{Datum, SqlType, TypeId};
use TypeId::*;
use cases::{ARRAYS, PARTITIONS, SCALARS, TWO_COLUMNS};
use std::sync::Arc;

#[path = "hash_cases.rs"]
mod cases;

fn value(text: &str, ty: SqlType) -> Datum {
    if text == "NULL" {
        return Datum::Null;
    }
    parse_text(text, ty).unwrap_or_else(|e| panic!("{text:?} as {ty:?}: {e:?}"))
}

/// Checks one value's standard hash and its extended hash with seeds 0,
/// HASH_PARTITION_SEED (8816678312871386365) and -1.
fn check(d: &Datum, ty: TypeId, what: &str, expected: (i32, i64, i64, i64)) {
    let got = (
        hash_datum(d, ty).unwrap() as i32,
        hash_datum_extended(d, ty, 0).unwrap() as i64,
        hash_datum_extended(d, ty, HASH_PARTITION_SEED).unwrap() as i64,
        hash_datum_extended(d, ty, u64::MAX).unwrap() as i64,
    );
    assert_eq!(got, expected, "{what} as {ty:?}");
}

/// `cases::SCALARS`: every type's edge values.
#[test]
fn scalar_hashes_match_postgres() {
    for &(text, ty, h, e0, ep, em) in SCALARS {
        check(&value(text, SqlType::new(ty)), ty, text, (h, e0, ep, em));
    }
}

/// `cases::ARRAYS`: NULL elements, dimensions, bounds, element types.
#[test]
fn array_hashes_match_postgres() {
    for &(text, ty, h, e0, ep, em) in ARRAYS {
        check(&value(text, SqlType::new(ty)), ty, text, (h, e0, ep, em));
        // hash_array(anyarray) takes the element type from the value.
        check(
            &value(text, SqlType::new(ty)),
            AnyArray,
            text,
            (h, e0, ep, em),
        );
    }
}

fn record(fields: Vec<(TypeId, Datum)>) -> Datum {
    let (types, values): (Vec<TypeId>, Vec<Datum>) = fields.into_iter().unzip();
    Datum::Record(Arc::new(Record::new(Record, Arc::from(types), values)))
}

fn int4s(items: &[i32]) -> Datum {
    let items = items.iter().map(|&i| Datum::Int4(i)).collect();
    Datum::Array(Arc::new(Array::from_items(Int4, items)))
}

/// `select hash_record(r), hash_record_extended(r, 0),
/// hash_record_extended(r, 8816678312871386365), hash_record_extended(r, -1)` for each r.
#[test]
fn record_hashes_match_postgres() {
    let num = |s: &str| value(s, SqlType::new(Numeric));
    let cases = [
        (
            "row(1, 'a'::text)",
            record(vec![
                (Int4, Datum::Int4(1)),
                (Text, Datum::Text("a".into())),
            ]),
            (
                -2147270101,
                483885392970596907,
                -6133831623022241210,
                32059888068415440,
            ),
        ),
        (
            "row(null::int4, 2)",
            record(vec![(Int4, Datum::Null), (Int4, Datum::Int4(2))]),
            (
                1134484726,
                3647684041653542134,
                -6784076462669891433,
                -9179477051440630479,
            ),
        ),
        (
            "row(1::int8, 1.5::numeric, true)",
            record(vec![
                (Int8, Datum::Int8(1)),
                (Numeric, num("1.5")),
                (Bool, Datum::Bool(true)),
            ]),
            (
                1290458614,
                -4765266926586112522,
                6597430944022011063,
                -1593886596098726832,
            ),
        ),
        (
            "row(array[1,2], null::text)",
            record(vec![(Int4Array, int4s(&[1, 2])), (Text, Datum::Null)]),
            (
                -297298961,
                -1719663175713451025,
                -8125720686633348035,
                490228638540140062,
            ),
        ),
        ("row()", record(vec![]), (0, 0, 0, 0)),
        (
            "row('1 2'::oidvector)",
            record(vec![(OidVector, value("1 2", SqlType::new(OidVector)))]),
            (
                456323500,
                4561117610811519404,
                -8309610450094201408,
                -2315926491277761373,
            ),
        ),
        (
            // int2vector hashes as int2[] (array_ops is binary-coercible to it).
            "row('1 2'::int2vector)",
            record(vec![(Int2Vector, value("1 2", SqlType::new(Int2Vector)))]),
            (
                -2087800271,
                539583254774067761,
                -6212682626571898845,
                610870087491925538,
            ),
        ),
    ];
    for (what, d, expected) in &cases {
        check(d, Record, what, *expected);
    }
    // A named composite hashes as an anonymous record with the same fields:
    // `create type pt as (x int, y text)`, hash_record(row(1,'a')::pt) = -2147270101; and as
    // a field of a record, `row(row(1,'a')::pt, 'x'::text)`.
    let pt = Datum::Record(Arc::new(Record::new(
        Composite(90000),
        Arc::from(vec![Int4, Text]),
        vec![Datum::Int4(1), Datum::Text("a".into())],
    )));
    assert_eq!(
        hash_datum(&pt, Composite(90000)).unwrap() as i32,
        -2147270101
    );
    let outer = record(vec![
        (Composite(90000), pt.clone()),
        (Text, Datum::Text("x".into())),
    ]);
    check(
        &outer,
        Record,
        "row(row(1,'a')::pt, 'x'::text)",
        (
            -1065919554,
            -3921142058110723138,
            -4818628882727983610,
            7061981629374689196,
        ),
    );
    // `select hash_array(array[row(1, 'a'::text), null])`: -2140862730; of an array of pt,
    // the same, and `hash_array_extended(array[row(1,'a')::pt, null], 0)`:
    // -3446296891621046538.
    let rec = record(vec![
        (Int4, Datum::Int4(1)),
        (Text, Datum::Text("a".into())),
    ]);
    let anon = Datum::Array(Arc::new(Array::from_items(Record, vec![rec, Datum::Null])));
    assert_eq!(hash_datum(&anon, RecordArray).unwrap() as i32, -2140862730);
    let named = Array::from_items(Composite(90000), vec![pt, Datum::Null]);
    let named = Datum::Array(Arc::new(named));
    let ty = CompositeArray(90000);
    assert_eq!(hash_datum(&named, ty).unwrap() as i32, -2140862730);
    assert_eq!(
        hash_datum_extended(&named, ty, 0).unwrap() as i64,
        -3446296891621046538
    );
}

/// PostgreSQL 15 finds no hash function for refcursor, for an anonymous record inside a
/// record, for an array of them inside a record, nor (hash_array_extended only) for the
/// elements of record[]; each gives 42883 with PostgreSQL's message, also for NULL fields
/// and empty arrays, as the function is looked up before the value is read.
#[test]
fn types_without_a_hash_function() {
    let err = |r: PgResult<u64>| {
        let e = r.unwrap_err();
        (e.code, e.message.clone())
    };
    let no = |ext: bool, t: &str| {
        let which = if ext { "an extended hash" } else { "a hash" };
        (
            "42883",
            format!("could not identify {which} function for type {t}"),
        )
    };
    let cursor = Datum::Text("c".into());
    assert_eq!(
        err(hash_datum_extended(&cursor, Refcursor, 0)),
        no(true, "refcursor")
    );
    assert_eq!(
        err(hash_datum(&cursor, Refcursor).map(u64::from)),
        no(false, "refcursor")
    );
    // `select hash_record(row(null::refcursor))`
    let r = record(vec![(Refcursor, Datum::Null)]);
    assert_eq!(
        err(hash_datum(&r, Record).map(u64::from)),
        no(false, "refcursor")
    );
    // `select hash_array(array[]::refcursor[])`
    let empty = Datum::Array(Arc::new(Array::empty(Refcursor)));
    assert_eq!(
        err(hash_datum(&empty, AnyArray).map(u64::from)),
        no(false, "refcursor")
    );
    // `select hash_record(row(row(1,2), 'x'::text))`
    let inner = record(vec![(Int4, Datum::Int4(1)), (Int4, Datum::Int4(2))]);
    let r = record(vec![
        (Record, inner.clone()),
        (Text, Datum::Text("x".into())),
    ]);
    assert_eq!(
        err(hash_datum(&r, Record).map(u64::from)),
        no(false, "record")
    );
    // `select hash_record(row(array[row(1,2)]))`
    let arr = Datum::Array(Arc::new(Array::from_items(Record, vec![inner.clone()])));
    let r = record(vec![(RecordArray, arr.clone())]);
    assert_eq!(
        err(hash_datum(&r, Record).map(u64::from)),
        no(false, "record[]")
    );
    // `select hash_array_extended(array[row(1, 'a'::text), null], 0)`
    assert_eq!(
        err(hash_datum_extended(&arr, RecordArray, 0)),
        no(true, "record")
    );
    assert!(hash_datum(&arr, RecordArray).is_ok());
    assert!(!is_hashable(Refcursor) && !is_hashable(Unknown) && is_hashable(Int2Vector));
}

#[test]
fn lookup3_forms_agree() {
    // The standard hash is the low half of the extended one with seed 0, and hash_uint32 is
    // hash_bytes of the word's little-endian bytes, for every tail length.
    let data: Vec<u8> = (0u8..=255).map(|b| b.wrapping_mul(37)).collect();
    for n in 0..data.len() {
        let d = &data[..n];
        assert_eq!(hash_bytes(d), hash_bytes_extended(d, 0) as u32);
    }
    for k in [0u32, 1, 0x8000_0000, u32::MAX, 0xDEAD_BEEF] {
        assert_eq!(hash_uint32(k), hash_bytes(&k.to_le_bytes()));
        for seed in [0, 1, HASH_PARTITION_SEED, u64::MAX, 1 << 32] {
            assert_eq!(
                hash_uint32_extended(k, seed),
                hash_bytes_extended(&k.to_le_bytes(), seed)
            );
        }
    }
    // `select hashtext('abc'), hashtextextended('abc', 4294967296),
    // hashtextextended('abc', 4294967295)`: seeds with a zero low or high half.
    assert_eq!(hash_bytes(b"abc") as i32, -785388649);
    assert_eq!(
        hash_bytes_extended(b"abc", 1 << 32) as i64,
        -1269793291039555064
    );
    assert_eq!(
        hash_bytes_extended(b"abc", u32::MAX as u64) as i64,
        4302882831277602101
    );
    // hash_combine64(0, b) is b plus the constant.
    assert_eq!(hash_combine64(0, 1), 0x49a0_f4dd_15e5_a8e4);
}

/// `cases::PARTITIONS`: the partition of 8 and of 13 PostgreSQL put each one-column key in.
#[test]
fn partition_routing_matches_postgres() {
    for &(ty, column, text, r8, r13) in PARTITIONS {
        let sql = if column == "char(5)" {
            SqlType::with_typmod(ty, 9)
        } else {
            SqlType::new(ty)
        };
        let h = partition_hash(&[value(text, sql)], &[ty]).unwrap();
        assert_eq!((h % 8, h % 13), (r8, r13), "{text:?} as {column}");
    }
}

/// `cases::TWO_COLUMNS`: (int4, text) keys with NULLs in either column or both.
#[test]
fn two_column_partition_routing_matches_postgres() {
    for &(k0, k1, r8, r13) in TWO_COLUMNS {
        let values = [
            k0.map_or(Datum::Null, Datum::Int4),
            k1.map_or(Datum::Null, |s| Datum::Text(s.into())),
        ];
        let h = partition_hash(&values, &[Int4, Text]).unwrap();
        assert_eq!((h % 8, h % 13), (r8, r13), "({k0:?}, {k1:?})");
    }
    assert_eq!(
        partition_hash(&[Datum::Null, Datum::Null], &[Int4, Text]).unwrap(),
        0
    );
    assert!(partition_hash(&[Datum::Null], &[Int4, Text]).is_err());
}

#[test]
fn equal_values_hash_alike() {
    // hashint8 folds so that int2, int4 and int8 agree; float4 widens; numeric ignores scale.
    for v in [0i64, 1, -1, 5, i32::MAX as i64, i32::MIN as i64] {
        let h8 = hash_datum_extended(&Datum::Int8(v), Int8, 7).unwrap();
        assert_eq!(
            hash_datum_extended(&Datum::Int4(v as i32), Int4, 7).unwrap(),
            h8
        );
    }
    let f4 = hash_datum(&Datum::Float4(0.1), Float4).unwrap();
    assert_eq!(
        f4,
        hash_datum(&Datum::Float8(f64::from(0.1f32)), Float8).unwrap()
    );
    let neg_nan = Datum::Float8(-f64::NAN);
    assert_eq!(
        hash_datum(&neg_nan, Float8).unwrap(),
        hash_datum(&Datum::Float8(f64::NAN), Float8).unwrap()
    );
    // A big numeric (the BigDecimal form) and the same value as a small one.
    let a = value("12345678901234567890123.4500", SqlType::new(Numeric));
    let b = value("12345678901234567890123.45", SqlType::new(Numeric));
    assert_eq!(
        hash_datum(&a, Numeric).unwrap(),
        hash_datum(&b, Numeric).unwrap()
    );
    assert_eq!(hash_datum(&Datum::Null, Int4).unwrap(), 0);
}

struct Ctx;
impl crate::func::FuncContext for Ctx {
    fn transaction_timestamp(&self) -> i64 {
        0
    }
    fn statement_timestamp(&self) -> i64 {
        0
    }
    fn random(&mut self) -> f64 {
        0.0
    }
}

/// Resolves `name(types)` and calls it on `args` cast to the resolved parameter types.
fn call(name: &str, args: &[(&str, TypeId)]) -> Datum {
    use crate::cast::{CastContext, cast};
    let types: Vec<TypeId> = args.iter().map(|a| a.1).collect();
    let f = crate::func::resolve_function(name, &types)
        .unwrap_or_else(|| panic!("no function {name}{types:?}"));
    let vals: Vec<Datum> = args
        .iter()
        .zip(f.args)
        .map(|((text, ty), to)| {
            let v = value(text, SqlType::new(*ty));
            cast(v, *ty, SqlType::new(*to), CastContext::Implicit).unwrap()
        })
        .collect();
    (f.func)(&vals, &mut Ctx).unwrap()
}

/// `select hashint4extended(5, 8816678312871386365), hashtextextended('abc', 0),
/// hash_numeric_extended(1.50, 42), hashint4(5::int2), hashtext('ab  '::char(4)),
/// timestamp_hash('2000-01-01'::date), hashoid(7), hashfloat8(1),
/// hash_array('1 2'::oidvector), hash_record_extended(row(1, 'a'::text), 1)`
#[test]
fn sql_functions_resolve_and_return_postgres_values() {
    let seed = ("8816678312871386365", Int8);
    assert_eq!(
        call("hashint4extended", &[("5", Int4), seed]),
        Datum::Int8(-2840406021921404358)
    );
    assert_eq!(
        call("hashtextextended", &[("abc", Unknown), ("0", Int4)]),
        Datum::Int8(-6747756470228489321)
    );
    assert_eq!(
        call("hash_numeric_extended", &[("1.50", Numeric), ("42", Int4)]),
        Datum::Int8(-4021664855446081778)
    );
    assert_eq!(call("hashint4", &[("5", Int2)]), Datum::Int4(-1330264708));
    let padded = call("hashtext", &[("ab  ", Bpchar)]);
    assert_eq!(padded, Datum::Int4(1718550461));
    assert_eq!(call("hashbpchar", &[("ab  ", Bpchar)]), padded);
    assert_eq!(
        call("timestamp_hash", &[("2000-01-01", Date)]),
        Datum::Int4(-272711505)
    );
    assert_eq!(call("hashoid", &[("7", Int4)]), Datum::Int4(-978793473));
    assert_eq!(call("hashfloat8", &[("1", Int4)]), Datum::Int4(376496956));
    assert_eq!(
        call("hash_array", &[("1 2", OidVector)]),
        Datum::Int4(-2087800271)
    );
    let f = crate::func::resolve_function("hash_record_extended", &[Record, Int4]).unwrap();
    let r = record(vec![
        (Int4, Datum::Int4(1)),
        (Text, Datum::Text("a".into())),
    ]);
    let got = (f.func)(&[r, Datum::Int8(1)], &mut Ctx).unwrap();
    assert_eq!(got, Datum::Int8(6891891039566185794));
    assert_eq!((f.result, f.strict), (Int8, true));
}

/// PostgreSQL 15 answers 42883 (function does not exist) for each of these: no implicit cast
/// reaches the one signature, or (bytea, bool) there is no SQL-callable function.
#[test]
fn sql_functions_refuse_what_postgres_refuses() {
    let none = |name: &str, args: &[TypeId]| {
        assert!(
            crate::func::resolve_function(name, args).is_none(),
            "{name}{args:?} should not resolve"
        );
    };
    none("hashint2", &[Int4]);
    none("hashint4", &[Int8]);
    none("timestamp_hash", &[TimestampTz]);
    none("hashint4extended", &[Int4, Numeric]);
    none("hashtext", &[Int4]);
    none("hashvarlena", &[Bytea]);
    none("hashchar", &[Bool]);
    none("hash_array", &[Int4]);
    none("hash_record", &[Int4]);
    none("hashoidvector", &[OidArray]);
    none("hashint4", &[Int4, Int8]);
    let f = crate::func::resolve_function("hash_array_extended", &[Int2Vector, Int8]).unwrap();
    assert_eq!((f.args, f.result), (&[Int2Array, Int8][..], Int8));
    let f = crate::func::resolve_function("HashText", &[Varchar]).unwrap();
    assert_eq!((f.name, f.args, f.result), ("hashtext", &[Text][..], Int4));
}
