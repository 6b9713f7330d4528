use super::*;
use crate::numeric::Numeric;
use proptest::prelude::*;

const TYPES: [TypeId; 14] = [
    TypeId::Bool,
    TypeId::Int2,
    TypeId::Int4,
    TypeId::Int8,
    TypeId::Float4,
    TypeId::Float8,
    TypeId::Numeric,
    TypeId::Text,
    TypeId::Bpchar,
    TypeId::Bytea,
    TypeId::Date,
    TypeId::Timestamp,
    TypeId::TimestampTz,
    TypeId::Interval,
];

pub(crate) fn arb_datum(ty: TypeId) -> BoxedStrategy<Datum> {
    let v: BoxedStrategy<Datum> = match ty {
        TypeId::Bool => any::<bool>().prop_map(Datum::Bool).boxed(),
        TypeId::Int2 => any::<i16>().prop_map(Datum::Int2).boxed(),
        TypeId::Int4 => any::<i32>().prop_map(Datum::Int4).boxed(),
        TypeId::Int8 => any::<i64>().prop_map(Datum::Int8).boxed(),
        TypeId::Float4 => any::<f32>()
            .prop_filter("nan", |f| !f.is_nan())
            .prop_map(Datum::Float4)
            .boxed(),
        TypeId::Float8 => any::<f64>()
            .prop_filter("nan", |f| !f.is_nan())
            .prop_map(Datum::Float8)
            .boxed(),
        TypeId::Numeric => prop_oneof![
            (any::<i64>(), 0i64..12)
                .prop_map(|(m, s)| Datum::Numeric(Box::new(crate::numeric::finite(m.into(), s)))),
            Just(Datum::Numeric(Box::new(Numeric::NaN))),
            Just(Datum::Numeric(Box::new(Numeric::PosInf))),
            Just(Datum::Numeric(Box::new(Numeric::NegInf))),
        ]
        .boxed(),
        TypeId::Text | TypeId::Bpchar => "[a-c \\x00é]{0,6}".prop_map(Datum::Text).boxed(),
        TypeId::Bytea => proptest::collection::vec(
            prop_oneof![Just(0u8), Just(1), Just(255), any::<u8>()],
            0..6,
        )
        .prop_map(Datum::Bytea)
        .boxed(),
        TypeId::Date => (-1_000_000i32..1_000_000).prop_map(Datum::Date).boxed(),
        TypeId::Timestamp => any::<i64>().prop_map(Datum::Timestamp).boxed(),
        TypeId::TimestampTz => any::<i64>().prop_map(Datum::TimestampTz).boxed(),
        TypeId::Interval => (any::<i32>(), any::<i32>(), any::<i64>())
            .prop_map(|(months, days, micros)| {
                Datum::Interval(crate::interval::Interval {
                    months,
                    days,
                    micros,
                })
            })
            .boxed(),
        _ => Just(Datum::Null).boxed(),
    };
    prop_oneof![1 => Just(Datum::Null), 6 => v].boxed()
}

fn arb_row() -> impl Strategy<Value = (Vec<TypeId>, Vec<Datum>)> {
    proptest::collection::vec(proptest::sample::select(TYPES.to_vec()), 0..12).prop_flat_map(
        |types| {
            let values: Vec<_> = types.iter().map(|t| arb_datum(*t)).collect();
            (Just(types), values)
        },
    )
}

proptest! {
    #[test]
    fn round_trip((types, values) in arb_row()) {
        let mut buf = Vec::new();
        encode_row(&values, &types, &mut buf);
        let back = decode_row(&buf, &types).unwrap();
        prop_assert_eq!(&back, &values);
        for (i, v) in values.iter().enumerate() {
            prop_assert_eq!(&decode_column(&buf, &types, i).unwrap(), v);
            // The integer read from stored bytes is the decoded datum's.
            prop_assert_eq!(int_value(&buf, &types, i).unwrap(), v.int_value());
        }
        // Truncated input never panics.
        for cut in 0..buf.len() {
            let _ = decode_row(&buf[..cut], &types);
        }
    }

    /// Decoding some columns gives exactly those values, NULL for the others.
    #[test]
    fn some_columns((types, values) in arb_row(), wanted in proptest::collection::vec(any::<bool>(), 0..14)) {
        let mut buf = Vec::new();
        encode_row(&values, &types, &mut buf);
        let back = decode_row_cols(&buf, &types, &wanted).unwrap();
        prop_assert_eq!(back.len(), values.len());
        for (i, v) in values.iter().enumerate() {
            let expect = if wanted.get(i).copied().unwrap_or(true) { v.clone() } else { Datum::Null };
            prop_assert_eq!(&back[i], &expect);
        }
        for cut in 0..buf.len() {
            let _ = decode_row_cols(&buf[..cut], &types, &wanted);
        }
    }
}

#[test]
fn added_columns_read_as_null() {
    let mut buf = Vec::new();
    encode_row(&[Datum::Int4(7)], &[TypeId::Int4], &mut buf);
    let types = [TypeId::Int4, TypeId::Text, TypeId::Int8];
    assert_eq!(
        decode_row(&buf, &types).unwrap(),
        vec![Datum::Int4(7), Datum::Null, Datum::Null]
    );
    assert_eq!(decode_column(&buf, &types, 2).unwrap(), Datum::Null);
}

#[test]
fn layout_is_documented_one() {
    let mut buf = Vec::new();
    encode_row(
        &[Datum::Int4(1), Datum::Null, Datum::Text("ab".into())],
        &[TypeId::Int4, TypeId::Int8, TypeId::Text],
        &mut buf,
    );
    assert_eq!(buf, vec![3, 0, 0b010, 1, 0, 0, 0, 2, 0, 0, 0, b'a', b'b']);
}

#[test]
fn corrupt_is_xx001() {
    assert_eq!(decode_row(&[5], &[TypeId::Int4]).unwrap_err().code, "XX001");
    assert_eq!(
        decode_row(&[1, 0, 0, 1], &[TypeId::Int4]).unwrap_err().code,
        "XX001"
    );
}
