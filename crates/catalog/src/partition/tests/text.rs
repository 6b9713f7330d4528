use super::*;

// PostgreSQL 15 (one table per key type, then
//   select c.relname, pg_get_expr(relpartbound, c.oid) from pg_class c where relispartition):
//   k21   (int2)        for values in (1, -2)               FOR VALUES IN ('1', '-2')
//   k41   (int4)        in (1, -2, 2147483647, -2147483648)
//                       FOR VALUES IN (1, '-2', 2147483647, '-2147483648')
//   k82   (int8)        from (-10) to (10)                  FOR VALUES FROM ('-10') TO ('10')
//   kb1   (bool)        in (true, null)                     FOR VALUES IN (true, NULL)
//   kby1  (bytea)       in ('\x00ff')                       FOR VALUES IN ('\x00ff')
//   kc1   (char(3))     in ('x', 'yy ')                     FOR VALUES IN ('x  ', 'yy ')
//   kd2   (date)        from ('2021-01-01') to ('infinity') FOR VALUES FROM ('2021-01-01') TO ('infinity')
//   kf1   (float8)      in (1.5, 1, 'Infinity')             FOR VALUES IN ('1.5', '1', 'Infinity')
//   ki1   (interval)    from ('1 day') to ('1 mon')         FOR VALUES FROM ('1 day') TO ('1 mon')
//   kn1   (numeric)     in (1, 1.5, -1.5, 'NaN', 1e10, 0.000001, 100.00)
//                       FOR VALUES IN ('1', 1.5, '-1.5', 'NaN', '10000000000', 0.000001, 100.00)
//   ko1   (oid)         in (1, 2)                           FOR VALUES IN ('1', '2')
//   kt1   (timestamp)   from ('2020-01-01') to ('2021-01-01 10:00:00.5')
//                       FOR VALUES FROM ('2020-01-01 00:00:00') TO ('2021-01-01 10:00:00.5')
//   ktz1  (timestamptz) from ('2020-01-01') to ('2021-01-01')
//                       FOR VALUES FROM ('2020-01-01 00:00:00+00') TO ('2021-01-01 00:00:00+00')
//   lz    (text)        in ('z', 'a', 'z', null, null, 'it''s', 'back\slash')
//                       FOR VALUES IN ('z', 'a', NULL, 'it''s', 'back\slash')
//   m1    (int, text)   from (minvalue, minvalue) to (10, 'x')
//                       FOR VALUES FROM (MINVALUE, MINVALUE) TO (10, 'x')
//   m2                  FOR VALUES FROM (10, 'x') TO (MAXVALUE, MAXVALUE)
//   h1    (hash)        FOR VALUES WITH (modulus 4, remainder 1)
//   ld1                 DEFAULT
#[test]
fn bound_text_as_pg_get_expr() {
    use RangeValue::{MaxValue, MinValue};
    let one = |ty: TypeId, texts: &[&str]| -> (PartitionKey, PartitionBound) {
        let values = texts
            .iter()
            .map(|t| {
                if *t == "NULL" {
                    Datum::Null
                } else {
                    val(ty, t)
                }
            })
            .collect();
        (key(PartitionStrategy::List, &[ty]), list(values))
    };
    let lists = [
        (one(TypeId::Int2, &["1", "-2"]), "FOR VALUES IN ('1', '-2')"),
        (
            one(TypeId::Int4, &["1", "-2", "2147483647", "-2147483648"]),
            "FOR VALUES IN (1, '-2', 2147483647, '-2147483648')",
        ),
        (
            one(TypeId::Bool, &["true", "NULL"]),
            "FOR VALUES IN (true, NULL)",
        ),
        (one(TypeId::Bool, &["false"]), "FOR VALUES IN (false)"),
        (
            one(TypeId::Bytea, &["\\x00ff"]),
            "FOR VALUES IN ('\\x00ff')",
        ),
        (
            one(TypeId::Float8, &["1.5", "1", "Infinity"]),
            "FOR VALUES IN ('1.5', '1', 'Infinity')",
        ),
        (
            one(TypeId::Float4, &["1.5", "1"]),
            "FOR VALUES IN ('1.5', '1')",
        ),
        (
            one(
                TypeId::Numeric,
                &["1", "1.5", "-1.5", "NaN", "1e10", "0.000001", "100.00"],
            ),
            "FOR VALUES IN ('1', 1.5, '-1.5', 'NaN', '10000000000', 0.000001, 100.00)",
        ),
        (one(TypeId::Oid, &["1", "2"]), "FOR VALUES IN ('1', '2')"),
        (
            one(TypeId::Varchar, &["x", "y"]),
            "FOR VALUES IN ('x', 'y')",
        ),
        (one(TypeId::Name, &["x"]), "FOR VALUES IN ('x')"),
        (
            one(
                TypeId::Text,
                &["z", "a", "z", "NULL", "NULL", "it's", "back\\slash"],
            ),
            "FOR VALUES IN ('z', 'a', NULL, 'it''s', 'back\\slash')",
        ),
    ];
    for ((k, b), expected) in lists {
        assert_eq!(bound_text(&b.canonical(), &k), expected);
    }
    let bpchar = keel_types::io::parse_text("x", SqlType::with_typmod(TypeId::Bpchar, 7)).unwrap();
    assert_eq!(
        bound_text(
            &list(vec![bpchar, txt("yy ")]),
            &key(PartitionStrategy::List, &[TypeId::Bpchar])
        ),
        "FOR VALUES IN ('x  ', 'yy ')"
    );

    let r = |ty: TypeId, lo: &str, hi: &str| {
        bound_text(
            &range(vec![v(val(ty, lo))], vec![v(val(ty, hi))]),
            &key(PartitionStrategy::Range, &[ty]),
        )
    };
    assert_eq!(
        r(TypeId::Int8, "-10", "10"),
        "FOR VALUES FROM ('-10') TO ('10')"
    );
    assert_eq!(
        r(TypeId::Date, "2021-01-01", "infinity"),
        "FOR VALUES FROM ('2021-01-01') TO ('infinity')"
    );
    assert_eq!(
        r(TypeId::Interval, "1 day", "1 mon"),
        "FOR VALUES FROM ('1 day') TO ('1 mon')"
    );
    assert_eq!(
        r(TypeId::Timestamp, "2020-01-01", "2021-01-01 10:00:00.5"),
        "FOR VALUES FROM ('2020-01-01 00:00:00') TO ('2021-01-01 10:00:00.5')"
    );
    assert_eq!(
        r(TypeId::TimestampTz, "2020-01-01", "2021-01-01"),
        "FOR VALUES FROM ('2020-01-01 00:00:00+00') TO ('2021-01-01 00:00:00+00')"
    );
    assert_eq!(r(TypeId::Int4, "1", "10"), "FOR VALUES FROM (1) TO (10)");

    let m = key(PartitionStrategy::Range, &[TypeId::Int4, TypeId::Text]);
    assert_eq!(
        bound_text(
            &range(vec![MinValue, MinValue], vec![v(int(10)), v(txt("x"))]),
            &m
        ),
        "FOR VALUES FROM (MINVALUE, MINVALUE) TO (10, 'x')"
    );
    assert_eq!(
        bound_text(
            &range(vec![v(int(10)), v(txt("x"))], vec![MaxValue, MaxValue]),
            &m
        ),
        "FOR VALUES FROM (10, 'x') TO (MAXVALUE, MAXVALUE)"
    );
    let h = key(PartitionStrategy::Hash, &[TypeId::Int4]);
    assert_eq!(
        bound_text(&hash(4, 1), &h),
        "FOR VALUES WITH (modulus 4, remainder 1)"
    );
    assert_eq!(bound_text(&PartitionBound::Default, &h), "DEFAULT");
}

// PostgreSQL 15:
//   create table mm (a int, b text) partition by range (a, b);
//   create table mm1 partition of mm for values from (1, 'a') to (2, 'b');
//   insert into mm values (null, 'it''s');
//     ERROR:  23514: no partition of relation "mm" found for row
//     DETAIL:  Partition key of the failing row contains (a, b) = (null, it's).
//   insert into mm values (5, repeat('x', 70) || 'é' || repeat('y', 10));
//     DETAIL:  ... (a, b) = (5, xxxx...(64 x)...).
//   insert into rn values (25);
//     DETAIL:  Partition key of the failing row contains (a) = (25).
#[test]
fn no_partition_for_row() {
    let mm = key(PartitionStrategy::Range, &[TypeId::Int4, TypeId::Text]);
    let e = no_partition_error("mm", &["a", "b"], &[Datum::Null, txt("it's")], &mm);
    assert_eq!(
        (e.code, e.message.as_str(), e.detail.as_deref()),
        (
            "23514",
            "no partition of relation \"mm\" found for row",
            Some("Partition key of the failing row contains (a, b) = (null, it's).")
        )
    );
    let long = format!("{}é{}", "x".repeat(70), "y".repeat(10));
    let e = no_partition_error("mm", &["a", "b"], &[int(5), txt(&long)], &mm);
    assert_eq!(
        e.detail.as_deref(),
        Some(
            format!(
                "Partition key of the failing row contains (a, b) = (5, {}...).",
                "x".repeat(64)
            )
            .as_str()
        )
    );
    // A multi-byte character across the 64-byte mark is left out whole.
    let e = no_partition_error(
        "mm",
        &["a", "b"],
        &[int(5), txt(&format!("{}é", "x".repeat(63)))],
        &mm,
    );
    assert!(
        e.detail
            .as_deref()
            .unwrap()
            .ends_with(&format!("(5, {}...).", "x".repeat(63)))
    );
    let rn = key(PartitionStrategy::Range, &[TypeId::Int4]);
    let e = no_partition_error("rn", &["a"], &[int(25)], &rn);
    assert_eq!(
        e.detail.as_deref(),
        Some("Partition key of the failing row contains (a) = (25).")
    );
    assert_eq!(e.objects.as_ref().unwrap().table.as_deref(), Some("rn"));
}
