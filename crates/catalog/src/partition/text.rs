//! Bounds as text, as PostgreSQL prints them (pg_get_expr on relpartbound, psql's `\d`,
//! error DETAILs), and the errors the router's caller raises.

use super::{PartitionBound, PartitionKey, RangeValue};
use keel_common::{PgError, sqlstate};
use keel_types::{Datum, TypeId};

/// The text of a bound as `pg_get_expr(relpartbound, oid)` prints it:
/// `FOR VALUES FROM (1) TO (10)`, `FOR VALUES FROM (MINVALUE, 0) TO (10, MAXVALUE)`,
/// `FOR VALUES IN ('a', NULL)`, `FOR VALUES WITH (modulus 4, remainder 1)`, `DEFAULT`.
/// Values are written as ruleutils' get_const_expr writes constants without their type:
/// non-negative int4 and numerics with a point or exponent bare, booleans as `true`/`false`,
/// everything else (int2, int8, floats, negative int4, text, dates, ...) quoted.
pub fn bound_text(bound: &PartitionBound, key: &PartitionKey) -> String {
    match bound {
        PartitionBound::Default => "DEFAULT".to_string(),
        PartitionBound::Hash { modulus, remainder } => {
            format!("FOR VALUES WITH (modulus {modulus}, remainder {remainder})")
        }
        PartitionBound::List { values } => {
            let mut out = String::from("FOR VALUES IN (");
            for (i, v) in values.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                const_text(v, key.types[0], &mut out);
            }
            out.push(')');
            out
        }
        PartitionBound::Range { lower, upper } => format!(
            "FOR VALUES FROM {} TO {}",
            range_values_text(lower, key),
            range_values_text(upper, key)
        ),
    }
}

/// One side of a range bound, `(1, MAXVALUE)` (get_range_partbound_string).
pub(super) fn range_values_text(values: &[RangeValue], key: &PartitionKey) -> String {
    let mut out = String::from("(");
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        match v {
            RangeValue::MinValue => out.push_str("MINVALUE"),
            RangeValue::MaxValue => out.push_str("MAXVALUE"),
            RangeValue::Value(d) => const_text(d, key.types[i], &mut out),
        }
    }
    out.push(')');
    out
}

/// A constant as get_const_expr writes it with `showtype` -1.
fn const_text(v: &Datum, ty: TypeId, out: &mut String) {
    if v.is_null() {
        out.push_str("NULL");
        return;
    }
    let mut text = String::new();
    keel_types::io::format_text(v, ty, &mut text);
    let bare = match ty {
        // A leading minus would read back as an operator applied to a constant.
        TypeId::Int4 => !text.starts_with('-'),
        // Only what reads back as a numeric constant: not integers, infinities or NaN.
        TypeId::Numeric => {
            text.starts_with(|c: char| c.is_ascii_digit()) && text.contains(['.', 'e', 'E'])
        }
        TypeId::Bool => {
            out.push_str(if text == "t" { "true" } else { "false" });
            return;
        }
        _ => false,
    };
    if bare {
        out.push_str(&text);
    } else {
        // standard_conforming_strings is on: only quotes are doubled.
        out.push('\'');
        out.push_str(&text.replace('\'', "''"));
        out.push('\'');
    }
}

/// 23514 `no partition of relation "parent" found for row`, with PostgreSQL's DETAIL
/// `Partition key of the failing row contains (a, b) = (1, x).`: what the caller raises when
/// [`super::PartitionDesc::route`] finds no partition. `key_columns` are the key columns'
/// names as PostgreSQL prints them; each value is its output text, `null` for NULL, cut to 64
/// bytes with `...` appended when longer.
pub fn no_partition_error(
    parent: &str,
    key_columns: &[&str],
    key_values: &[Datum],
    key: &PartitionKey,
) -> PgError {
    const MAX_FIELD_LEN: usize = 64;
    let mut values = String::new();
    for (i, v) in key_values.iter().enumerate() {
        if i > 0 {
            values.push_str(", ");
        }
        if v.is_null() {
            values.push_str("null");
            continue;
        }
        let mut text = String::new();
        keel_types::io::format_text(v, key.types[i], &mut text);
        if text.len() > MAX_FIELD_LEN {
            let mut cut = MAX_FIELD_LEN;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push_str("...");
        }
        values.push_str(&text);
    }
    PgError::new(
        sqlstate::CHECK_VIOLATION,
        format!("no partition of relation \"{parent}\" found for row"),
    )
    .with_detail(format!(
        "Partition key of the failing row contains ({}) = ({values}).",
        key_columns.join(", ")
    ))
    .with_table(parent)
}

/// 23514 `updated partition constraint for default partition "name" would be violated by
/// some row`: what the caller raises when its scan of the default partition finds a row the
/// new partition would accept (check_default_partition_contents).
pub fn default_partition_violation(default_name: &str) -> PgError {
    PgError::new(
        sqlstate::CHECK_VIOLATION,
        format!(
            "updated partition constraint for default partition \"{default_name}\" would be violated by some row"
        ),
    )
    .with_table(default_name)
}
