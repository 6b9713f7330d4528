//! `numeric`'s text and binary forms: PostgreSQL's input syntax, its output, and the wire's
//! binary format (base-10000 digit groups).

use crate::numeric::{Numeric, finite};
use bigdecimal::BigDecimal;
use bigdecimal::num_bigint::BigInt;
use bigdecimal::num_traits::{Signed, Zero};
use keel_common::{PgError, PgResult, sqlstate};

impl Numeric {
    /// Parses PostgreSQL's numeric text syntax (surrounding whitespace allowed).
    /// None means invalid syntax.
    pub fn parse(s: &str) -> Option<Numeric> {
        let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
        let lower = t.to_ascii_lowercase();
        match lower.as_str() {
            "nan" => return Some(Numeric::NaN),
            "infinity" | "+infinity" | "inf" | "+inf" => return Some(Numeric::PosInf),
            "-infinity" | "-inf" => return Some(Numeric::NegInf),
            _ => {}
        }
        let b = t.as_bytes();
        let mut i = 0;
        let mut neg = false;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            neg = b[i] == b'-';
            i += 1;
        }
        let mut digits = String::with_capacity(b.len());
        let mut frac = 0i64;
        let mut seen_digit = false;
        let mut seen_point = false;
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_digit() {
                digits.push(c as char);
                seen_digit = true;
                if seen_point {
                    frac += 1;
                }
            } else if c == b'.' && !seen_point {
                seen_point = true;
            } else {
                break;
            }
            i += 1;
        }
        if !seen_digit {
            return None;
        }
        let mut exp = 0i64;
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            i += 1;
            let mut eneg = false;
            if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
                eneg = b[i] == b'-';
                i += 1;
            }
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                exp = exp.saturating_mul(10).saturating_add((b[i] - b'0') as i64);
                i += 1;
            }
            if start == i || exp > 100_000 {
                return None;
            }
            if eneg {
                exp = -exp;
            }
        }
        if i != b.len() {
            return None;
        }
        let mut n: BigInt = digits.parse().ok()?;
        if neg {
            n = -n;
        }
        Some(finite(n, frac - exp))
    }

    /// Appends the text form PostgreSQL prints.
    pub fn write_text(&self, out: &mut String) {
        match self {
            Numeric::NaN => out.push_str("NaN"),
            Numeric::PosInf => out.push_str("Infinity"),
            Numeric::NegInf => out.push_str("-Infinity"),
            Numeric::Small(d, s) => crate::numeric_small::write_text(*d, *s, out),
            Numeric::Finite(d) => write_decimal(d, out),
        }
    }

    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.write_text(&mut s);
        s
    }

    /// Binary send format: ndigits, weight, sign, dscale, then base-10000 digits (all i16 BE).
    pub fn write_binary(&self, out: &mut Vec<u8>) {
        let sign: u16 = match self {
            Numeric::NaN => 0xC000,
            Numeric::PosInf => 0xD000,
            Numeric::NegInf => 0xF000,
            _ => 0,
        };
        let written = self.with_digits(|neg, digits, scale| {
            let dscale = scale.max(0) as usize;
            let groups = Base10000::new(digits, dscale);
            let (first, last, weight) = groups.span();
            let ndigits = last - first;
            out.reserve(8 + 2 * ndigits);
            out.extend_from_slice(&(ndigits as i16).to_be_bytes());
            out.extend_from_slice(&(weight as i16).to_be_bytes());
            let sign: u16 = if neg && ndigits > 0 { 0x4000 } else { 0 };
            out.extend_from_slice(&sign.to_be_bytes());
            out.extend_from_slice(&(dscale as u16).to_be_bytes());
            for k in first..last {
                out.extend_from_slice(&groups.group(k).to_be_bytes());
            }
        });
        if written.is_none() {
            out.extend_from_slice(&[0, 0, 0, 0]);
            out.extend_from_slice(&sign.to_be_bytes());
            out.extend_from_slice(&[0, 0]);
        }
    }

    /// How PostgreSQL stores a finite value: its number of base-10000 digits (leading and
    /// trailing zero digits stripped), the weight of the first, and its display scale; None
    /// for NaN and ±Infinity.
    pub fn base10000_shape(&self) -> Option<(usize, i64, usize)> {
        self.with_digits(|_, digits, scale| {
            let dscale = scale.max(0) as usize;
            let (first, last, weight) = Base10000::new(digits, dscale).span();
            (last - first, weight, dscale)
        })
    }

    /// Hands `visit` the base-10000 digits PostgreSQL stores for a finite value, most
    /// significant first, leading and trailing zero digits stripped (none for zero), and
    /// returns the weight of the first (0 for zero); None for NaN and ±Infinity.
    pub(crate) fn for_each_base10000(&self, mut visit: impl FnMut(i16)) -> Option<i64> {
        self.with_digits(|_, digits, scale| {
            let groups = Base10000::new(digits, scale.max(0) as usize);
            let (first, last, weight) = groups.span();
            for k in first..last {
                visit(groups.group(k));
            }
            weight
        })
    }

    /// Binary receive format (see [`Numeric::write_binary`]).
    pub fn read_binary(b: &[u8]) -> PgResult<Numeric> {
        let bad = || {
            PgError::new(
                sqlstate::INVALID_BINARY_REPRESENTATION,
                "invalid numeric binary data",
            )
        };
        if b.len() < 8 {
            return Err(bad());
        }
        let nd = i16::from_be_bytes([b[0], b[1]]);
        let weight = i16::from_be_bytes([b[2], b[3]]) as i64;
        let sign = u16::from_be_bytes([b[4], b[5]]);
        let dscale = u16::from_be_bytes([b[6], b[7]]) as i64;
        match sign {
            0xC000 => return Ok(Numeric::NaN),
            0xD000 => return Ok(Numeric::PosInf),
            0xF000 => return Ok(Numeric::NegInf),
            0 | 0x4000 => {}
            _ => {
                return Err(PgError::new(
                    sqlstate::INVALID_BINARY_REPRESENTATION,
                    "invalid sign in external \"numeric\" value",
                ));
            }
        }
        if nd < 0 || b.len() != 8 + 2 * nd as usize {
            return Err(bad());
        }
        let mut n = BigInt::zero();
        for i in 0..nd as usize {
            let g = i16::from_be_bytes([b[8 + 2 * i], b[9 + 2 * i]]);
            if !(0..10000).contains(&g) {
                return Err(PgError::new(
                    sqlstate::INVALID_BINARY_REPRESENTATION,
                    "invalid digit in external \"numeric\" value",
                ));
            }
            n = n * 10000 + g;
        }
        if sign == 0x4000 {
            n = -n;
        }
        // value = n * 10000^(weight - nd + 1)
        let exp10 = 4 * (weight - nd as i64 + 1);
        let v = BigDecimal::new(n, -exp10);
        let v = crate::numeric::rescale(&v, dscale, true);
        let (n, s) = v.as_bigint_and_exponent();
        Ok(finite(n, s))
    }
}

pub(crate) fn write_decimal(d: &BigDecimal, out: &mut String) {
    let (n, scale) = d.as_bigint_and_exponent();
    if scale <= 0 {
        out.push_str(&n.to_string());
        if scale < 0 && !n.is_zero() {
            for _ in 0..(-scale) {
                out.push('0');
            }
        }
        return;
    }
    let s = n.abs().to_string();
    if n.is_negative() {
        out.push('-');
    }
    let scale = scale as usize;
    if s.len() > scale {
        out.push_str(&s[..s.len() - scale]);
        out.push('.');
        out.push_str(&s[s.len() - scale..]);
    } else {
        out.push_str("0.");
        for _ in 0..(scale - s.len()) {
            out.push('0');
        }
        out.push_str(&s);
    }
}

/// A magnitude's base-10000 digits, read from its decimal digits and scale without building
/// them: the integer part is padded with zeros in front and the fraction behind to whole groups
/// of four, group 0 being the most significant.
struct Base10000<'a> {
    digits: &'a [u8],
    /// Padded positions before `digits[0]`.
    offset: usize,
    int_groups: usize,
    groups: usize,
}

impl<'a> Base10000<'a> {
    fn new(digits: &'a [u8], scale: usize) -> Self {
        let int_len = digits.len().saturating_sub(scale);
        let int_groups = int_len.div_ceil(4);
        let frac_groups = scale.div_ceil(4);
        // Zeros between the point and the digits when the value is below one.
        let between = scale.saturating_sub(digits.len());
        Base10000 {
            digits,
            offset: int_groups * 4 - int_len + between,
            int_groups,
            groups: int_groups + frac_groups,
        }
    }

    fn group(&self, k: usize) -> i16 {
        let mut v = 0i16;
        for p in 4 * k..4 * k + 4 {
            let d = p
                .checked_sub(self.offset)
                .and_then(|i| self.digits.get(i))
                .map_or(0, |c| (c - b'0') as i16);
            v = v * 10 + d;
        }
        v
    }

    /// The non-zero groups `first..last` and the weight of `first` ((0, 0, 0) for zero).
    fn span(&self) -> (usize, usize, i64) {
        let Some(first) = (0..self.groups).find(|&k| self.group(k) != 0) else {
            return (0, 0, 0);
        };
        let last = (first..self.groups)
            .rev()
            .find(|&k| self.group(k) != 0)
            .unwrap_or(first);
        (first, last + 1, self.int_groups as i64 - 1 - first as i64)
    }
}
