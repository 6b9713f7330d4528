//! Mapping values onto a number line for histogram interpolation: PostgreSQL's
//! `convert_to_scalar` (selfuncs.c). A value and the two bounds of its histogram bin are
//! converted together, since strings scale relative to the characters the bounds use.

use keel_types::{Datum, TypeId};

const USECS_PER_DAY: f64 = 86_400_000_000.0;

/// `(value, low, high)` on a common scale, or None when the type has no such scale.
pub fn convert_to_scalar(
    value: &Datum,
    low: &Datum,
    high: &Datum,
    ty: TypeId,
) -> Option<(f64, f64, f64)> {
    match ty {
        TypeId::Text | TypeId::Varchar | TypeId::Bpchar | TypeId::Name => {
            let (Datum::Text(v), Datum::Text(l), Datum::Text(h)) = (value, low, high) else {
                return None;
            };
            Some(strings(v.as_bytes(), l.as_bytes(), h.as_bytes()))
        }
        TypeId::Bytea => {
            let (Datum::Bytea(v), Datum::Bytea(l), Datum::Bytea(h)) = (value, low, high) else {
                return None;
            };
            Some(byteas(v, l, h))
        }
        _ => Some((number(value)?, number(low)?, number(high)?)),
    }
}

/// Numeric, boolean and date/time values as doubles (dates and timestamps in microseconds;
/// an interval's months count 365.25/12 days, as PostgreSQL does).
fn number(v: &Datum) -> Option<f64> {
    Some(match v {
        Datum::Bool(b) => *b as u8 as f64,
        Datum::Int2(x) => *x as f64,
        Datum::Int4(x) => *x as f64,
        Datum::Int8(x) => *x as f64,
        Datum::Oid(x) => *x as f64,
        Datum::Float4(x) => *x as f64,
        Datum::Float8(x) => *x,
        Datum::Numeric(n) => n.to_f64(),
        Datum::Date(d) => *d as f64 * USECS_PER_DAY,
        Datum::Timestamp(t) | Datum::TimestampTz(t) => *t as f64,
        Datum::Interval(iv) => {
            iv.micros as f64
                + iv.days as f64 * USECS_PER_DAY
                + iv.months as f64 * (365.25 / 12.0 * USECS_PER_DAY)
        }
        _ => return None,
    })
}

/// Strings under collation "C": the byte range the bounds use (widened to whole letter and
/// digit ranges, or to printable ASCII when narrower than 10), the common prefix of all
/// three dropped, then each read as a base-(range) fraction of its first 20 bytes.
fn strings(v: &[u8], lo: &[u8], hi: &[u8]) -> (f64, f64, f64) {
    let first = hi.first().copied().unwrap_or(0) as i32;
    let (mut rangelo, mut rangehi) = (first, first);
    for &c in lo.iter().chain(hi) {
        rangelo = rangelo.min(c as i32);
        rangehi = rangehi.max(c as i32);
    }
    for (a, z) in [(b'A', b'Z'), (b'a', b'z'), (b'0', b'9')] {
        if rangelo <= z as i32 && rangehi >= a as i32 {
            rangelo = rangelo.min(a as i32);
            rangehi = rangehi.max(z as i32);
        }
    }
    if rangehi - rangelo < 9 {
        rangelo = b' ' as i32;
        rangehi = 127;
    }
    let common = lo
        .iter()
        .zip(hi)
        .zip(v)
        .take_while(|((l, h), x)| l == h && l == x)
        .count();
    let conv = |s: &[u8]| fraction(&s[common..], 20, rangelo, rangehi);
    (conv(v), conv(lo), conv(hi))
}

fn byteas(v: &[u8], lo: &[u8], hi: &[u8]) -> (f64, f64, f64) {
    let common = lo
        .iter()
        .zip(hi)
        .zip(v)
        .take_while(|((l, h), x)| l == h && l == x)
        .count();
    let conv = |s: &[u8]| fraction(&s[common..], 10, 0, 255);
    (conv(v), conv(lo), conv(hi))
}

fn fraction(s: &[u8], max_len: usize, rangelo: i32, rangehi: i32) -> f64 {
    // A C string ends at its first NUL byte; bytea has none to stop at.
    let s = if max_len == 20 {
        &s[..s.iter().position(|&c| c == 0).unwrap_or(s.len())]
    } else {
        s
    };
    let base = (rangehi - rangelo + 1) as f64;
    let mut num = 0.0;
    let mut denom = base;
    for &c in s.iter().take(max_len) {
        let ch = (c as i32).clamp(rangelo - 1, rangehi + 1);
        num += (ch - rangelo) as f64 / denom;
        denom *= base;
    }
    num
}
