//! Stored widths of values as PostgreSQL's heap holds them, for `avg_width` and for the
//! "too wide" rule of ANALYZE.

use keel_types::numeric::Numeric;
use keel_types::{Datum, TypeId};

/// PostgreSQL's VARATT_SHORT_MAX: a varlena of at most this many bytes (header included) is
/// stored with a 1-byte header.
const VARATT_SHORT_MAX: usize = 0x7F;

/// The fixed length of values of `ty` (PostgreSQL's `typlen`), or None for varlena types.
pub(crate) fn fixed_len(ty: TypeId) -> Option<i32> {
    match ty.typlen() {
        n if n > 0 => Some(n as i32),
        _ => None,
    }
}

/// Bytes of a varlena with `payload` data bytes as stored in a heap tuple (1-byte header when
/// it fits, 4-byte otherwise). Values past TOAST's threshold would be compressed by
/// PostgreSQL; Keel stores them whole, so widths of such values can differ.
fn varlena(payload: usize) -> usize {
    if payload < VARATT_SHORT_MAX {
        payload + 1
    } else {
        payload + 4
    }
}

/// The raw (detoasted) size PostgreSQL's `toast_raw_datum_size` reports: 4-byte header.
pub(crate) fn raw_size(v: &Datum) -> usize {
    payload(v) + 4
}

/// The stored width of a non-null varlena value (`VARSIZE_ANY`).
pub(crate) fn stored_width(v: &Datum) -> usize {
    varlena(payload(v))
}

fn payload(v: &Datum) -> usize {
    match v {
        Datum::Text(s) => s.len(),
        Datum::Bytea(b) => b.len(),
        Datum::Numeric(n) => numeric_payload(n),
        _ => 0,
    }
}

/// Bytes of a numeric's data after the varlena header: the 2-byte short header (dscale up
/// to 63, weight in -64..=63) or the 4-byte long one, then one 2-byte word per base-10000
/// digit, leading and trailing zero digits stripped (PostgreSQL's `make_result`).
fn numeric_payload(n: &Numeric) -> usize {
    let Some((ndigits, weight, dscale)) = n.base10000_shape() else {
        return 2;
    };
    let short = dscale <= 63 && (-64..=63).contains(&weight);
    (if short { 2 } else { 4 }) + 2 * ndigits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(s: &str) -> Datum {
        Datum::Numeric(Box::new(Numeric::parse(s).expect("numeric")))
    }

    #[test]
    fn numeric_widths_match_pg_column_size() {
        // pg_column_size(v) of the values stored in a numeric column on PostgreSQL 15 (a
        // free-standing value has a 4-byte header: 3 more).
        for (v, w) in [
            ("0", 3),
            ("1", 5),
            ("12345", 7),
            ("1.5", 7),
            ("0.0001", 5),
            ("123456789.123", 11),
            ("10000", 5),
        ] {
            assert_eq!(stored_width(&num(v)), w, "{v}");
        }
    }

    #[test]
    fn text_widths() {
        assert_eq!(stored_width(&Datum::Text("abc".into())), 4);
        assert_eq!(stored_width(&Datum::Text("x".repeat(126))), 127);
        assert_eq!(stored_width(&Datum::Text("x".repeat(127))), 131);
    }
}
