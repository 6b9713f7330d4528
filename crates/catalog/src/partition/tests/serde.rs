use super::*;

fn round_trip(bound: &PartitionBound) -> PartitionBound {
    let json = serde_json::to_string(bound).unwrap();
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{json}: {e}"))
}

#[test]
fn values_round_trip_through_their_text_form() {
    let values = vec![
        int(-7),
        Datum::Int8(i64::MIN),
        txt("it's a \"text\" \\ é"),
        val(TypeId::Numeric, "-12.3400"),
        val(TypeId::Numeric, "NaN"),
        val(TypeId::Date, "2024-02-29"),
        val(TypeId::Date, "infinity"),
        val(TypeId::Timestamp, "2020-01-01 10:00:00.5"),
        val(TypeId::TimestampTz, "2020-01-01 10:00:00+00"),
        Datum::Bool(true),
        Datum::Bool(false),
        Datum::Float8(0.1),
        val(TypeId::Bytea, "\\x00ff"),
        val(TypeId::Interval, "1 mon 2 days"),
        Datum::Null,
    ];
    for value in values {
        let b = list(vec![value.clone()]);
        let back = round_trip(&b);
        let PartitionBound::List { values } = &back else {
            panic!("{back:?}")
        };
        assert_eq!(
            keel_types::io::to_text(&values[0]),
            keel_types::io::to_text(&value)
        );
        assert_eq!(values[0].natural_type(), value.natural_type());
        assert_eq!(values[0].is_null(), value.is_null());
    }
}

#[test]
fn json_form() {
    let b = range(
        vec![RangeValue::MinValue, v(int(0))],
        vec![v(txt("x")), RangeValue::MaxValue],
    );
    assert_eq!(
        serde_json::to_string(&b).unwrap(),
        r#"{"Range":{"lower":["MinValue",{"Value":{"type":"Int4","text":"0"}}],"upper":[{"Value":{"type":"Text","text":"x"}},"MaxValue"]}}"#
    );
    assert_eq!(round_trip(&b), b);
    let b = list(vec![Datum::Null, val(TypeId::Numeric, "1.50")]);
    assert_eq!(
        serde_json::to_string(&b).unwrap(),
        r#"{"List":{"values":[null,{"type":"Numeric","text":"1.50"}]}}"#
    );
    for b in [hash(4, 3), PartitionBound::Default] {
        assert_eq!(round_trip(&b), b);
    }
    assert_eq!(
        serde_json::to_string(&PartitionBound::Default).unwrap(),
        r#""Default""#
    );
    let k = key(PartitionStrategy::Range, &[TypeId::Int4, TypeId::Date]);
    let json = serde_json::to_string(&k).unwrap();
    assert_eq!(
        json,
        r#"{"strategy":"Range","columns":[0,1],"types":["Int4","Date"]}"#
    );
    assert_eq!(serde_json::from_str::<PartitionKey>(&json).unwrap(), k);
}

#[test]
fn bad_value_text_fails_to_load() {
    let json = r#"{"List":{"values":[{"type":"Int4","text":"x"}]}}"#;
    assert!(serde_json::from_str::<PartitionBound>(json).is_err());
}
