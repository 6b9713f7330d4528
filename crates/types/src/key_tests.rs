use super::*;
use crate::ops::compare_typed;
use crate::row::tests_support::arb_datum;
use proptest::prelude::*;
use std::cmp::Ordering;

fn key(v: &Datum, ty: TypeId) -> Vec<u8> {
    let mut out = Vec::new();
    encode_key(std::slice::from_ref(v), &[ty], &mut out);
    out
}

fn sql_cmp(a: &Datum, b: &Datum, ty: TypeId) -> Ordering {
    compare_typed(a, b, ty)
}

const KEY_TYPES: [TypeId; 13] = [
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
    TypeId::Interval,
];

fn pair() -> impl Strategy<Value = (TypeId, Datum, Datum)> {
    proptest::sample::select(KEY_TYPES.to_vec())
        .prop_flat_map(|t| (Just(t), arb_datum(t), arb_datum(t)))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn key_order_matches_compare((ty, a, b) in pair()) {
        let (ka, kb) = (key(&a, ty), key(&b, ty));
        prop_assert_eq!(ka.cmp(&kb), sql_cmp(&a, &b, ty), "{:?} vs {:?}", a, b);
    }

    #[test]
    fn composite_keys_are_prefix_free((t1, a1, b1) in pair(), (t2, a2, b2) in pair()) {
        let mut ka = Vec::new();
        encode_key(&[a1.clone(), a2.clone()], &[t1, t2], &mut ka);
        let mut kb = Vec::new();
        encode_key(&[b1.clone(), b2.clone()], &[t1, t2], &mut kb);
        let expect = sql_cmp(&a1, &b1, t1).then(sql_cmp(&a2, &b2, t2));
        prop_assert_eq!(ka.cmp(&kb), expect);
        let p = key(&a1, t1);
        prop_assert!(ka.starts_with(&p));
    }

    /// An index-only scan returns what the key decodes to: it must be the stored value.
    #[test]
    fn returnable_keys_decode_to_the_stored_values(
        (t1, a1, _b1) in pair(), (t2, a2, _b2) in pair(), null in any::<bool>()
    ) {
        let a2 = if null { Datum::Null } else { a2 };
        let mut k = Vec::new();
        encode_key(&[a1.clone(), a2.clone()], &[t1, t2], &mut k);
        let back = decode_key(&k, &[t1, t2]);
        if key_returns(t1) && key_returns(t2) {
            let back = back.expect("decodes");
            prop_assert_eq!(format!("{:?}", back), format!("{:?}", vec![a1, a2]));
        }
    }

    #[test]
    fn numeric_scale_does_not_matter(m in any::<i64>(), s in 0i64..10, extra in 0i64..5) {
        let a = crate::numeric::finite(m.into(), s);
        let scaled: bigdecimal::num_bigint::BigInt = bigdecimal::num_bigint::BigInt::from(m) * bigdecimal::num_bigint::BigInt::from(10).pow(extra as u32);
        let b = crate::numeric::finite(scaled, s + extra);
        prop_assert_eq!(key(&Datum::Numeric(Box::new(a)), TypeId::Numeric), key(&Datum::Numeric(Box::new(b)), TypeId::Numeric));
    }
}

#[test]
fn text_with_zero_bytes_and_empty_values_decode() {
    for (v, ty) in [
        (Datum::Bytea(vec![0, 0xFF, 0, 0]), TypeId::Bytea),
        (Datum::Bytea(vec![]), TypeId::Bytea),
        (Datum::Text(String::new()), TypeId::Text),
        (Datum::Text("a\u{0}b".into()), TypeId::Text),
        (Datum::Int8(i64::MIN), TypeId::Int8),
        (Datum::Int2(-1), TypeId::Int2),
        (Datum::Oid(u32::MAX), TypeId::Oid),
    ] {
        let k = key(&v, ty);
        let back = decode_key(&k, &[ty]).expect("decodes");
        assert_eq!(format!("{back:?}"), format!("{:?}", [v]));
    }
    assert!(decode_key(&[TAG_VALUE, 1, 2], &[TypeId::Int4]).is_none());
    assert!(!key_returns(TypeId::Numeric) && !key_returns(TypeId::Float8));
}

#[test]
fn special_values() {
    // 1.0 = 1.00, -0.0 = 0.0, NaN greatest, NULL last.
    let n = |s: &str| Datum::Numeric(Box::new(crate::numeric::Numeric::parse(s).unwrap()));
    assert_eq!(
        key(&n("1.0"), TypeId::Numeric),
        key(&n("1.00"), TypeId::Numeric)
    );
    assert!(key(&n("Infinity"), TypeId::Numeric) < key(&n("NaN"), TypeId::Numeric));
    assert!(key(&n("-Infinity"), TypeId::Numeric) < key(&n("-1e30"), TypeId::Numeric));
    assert!(key(&n("0.5"), TypeId::Numeric) < key(&n("0.55"), TypeId::Numeric));
    assert!(key(&n("-0.55"), TypeId::Numeric) < key(&n("-0.5"), TypeId::Numeric));
    assert!(key(&n("99"), TypeId::Numeric) < key(&n("100"), TypeId::Numeric));
    assert_eq!(
        key(&Datum::Float8(-0.0), TypeId::Float8),
        key(&Datum::Float8(0.0), TypeId::Float8)
    );
    assert!(
        key(&Datum::Float8(f64::INFINITY), TypeId::Float8)
            < key(&Datum::Float8(f64::NAN), TypeId::Float8)
    );
    assert!(key(&Datum::Float8(f64::NAN), TypeId::Float8) < key(&Datum::Null, TypeId::Float8));
    assert_eq!(
        key(&Datum::Text("ab  ".into()), TypeId::Bpchar),
        key(&Datum::Text("ab".into()), TypeId::Bpchar)
    );
    assert!(
        key(&Datum::Text("a".into()), TypeId::Text) < key(&Datum::Text("a\0".into()), TypeId::Text)
    );
    // A narrower integer datum encodes like the column's type.
    assert_eq!(
        key(&Datum::Int4(5), TypeId::Int8),
        key(&Datum::Int8(5), TypeId::Int8)
    );
}
