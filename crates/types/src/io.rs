//! Text and binary input/output, byte-compatible with PostgreSQL 15 (DateStyle ISO, MDY;
//! TimeZone UTC; extra_float_digits 1).

use crate::datetime;
use crate::interval::Interval;
use crate::numeric::Numeric;
use crate::{Datum, SqlType, TypeId};
use keel_common::{PgError, PgResult, sqlstate};

/// Input function: parses the text form of a value of type `ty`, applying its typmod
/// (varchar(n)/char(n) length checks and padding, numeric(p,s) rounding).
/// Errors: 22P02 invalid input syntax, 22003 out of range, 22001 too long, 22007/22008 datetime.
pub fn parse_text(text: &str, ty: SqlType) -> PgResult<Datum> {
    Ok(match ty.id {
        TypeId::Bool => Datum::Bool(parse_bool(text)?),
        TypeId::Int2 => {
            let v = parse_int(text, "smallint")?;
            Datum::Int2(i16::try_from(v).map_err(|_| int_range(text, "smallint"))?)
        }
        TypeId::Int4 => {
            let v = parse_int(text, "integer")?;
            Datum::Int4(i32::try_from(v).map_err(|_| int_range(text, "integer"))?)
        }
        TypeId::Int8 => Datum::Int8(parse_int(text, "bigint")?),
        TypeId::Float4 => Datum::Float4(parse_float4(text)?),
        TypeId::Float8 => Datum::Float8(parse_float8(text)?),
        TypeId::Numeric => {
            let n = Numeric::parse(text).ok_or_else(|| syntax("numeric", text))?;
            Datum::Numeric(Box::new(n.apply_typmod(ty.typmod)?))
        }
        TypeId::Text | TypeId::Unknown | TypeId::Refcursor => Datum::Text(text.to_owned()),
        TypeId::Varchar | TypeId::Bpchar => Datum::Text(apply_char_typmod(text, ty, false)?),
        TypeId::Name => Datum::Text(truncate_name(text).to_owned()),
        TypeId::Bytea => Datum::Bytea(parse_bytea(text)?),
        TypeId::Date => Datum::Date(datetime::parse_date(text)?),
        TypeId::Timestamp => Datum::Timestamp(datetime::parse_timestamp(text, false)?),
        TypeId::TimestampTz => Datum::TimestampTz(datetime::parse_timestamp(text, true)?),
        TypeId::Interval => Datum::Interval(Interval::parse(text)?),
        TypeId::Oid | TypeId::RegClass => Datum::Oid(parse_oid(text)?),
        TypeId::Uuid => Datum::Uuid(crate::uuid::parse(text)?),
        TypeId::Void => Datum::Null,
        TypeId::Int2Vector | TypeId::OidVector => Datum::Array(std::sync::Arc::new(
            crate::array::parse_vector(text, ty.id)?,
        )),
        t => match t.elem() {
            Some(elem) => Datum::Array(std::sync::Arc::new(crate::array::parse_text(
                text,
                SqlType::with_typmod(elem, ty.typmod),
            )?)),
            // A composite's input needs its fields' types: the binder reads it with
            // `record::parse_text`, never through here.
            None if matches!(t, TypeId::Composite(_) | TypeId::Record) => {
                return Err(PgError::new(
                    sqlstate::FEATURE_NOT_SUPPORTED,
                    "input of anonymous composite types is not implemented",
                ));
            }
            None => Datum::Null,
        },
    })
}

fn syntax(ty: &str, s: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_TEXT_REPRESENTATION,
        format!("invalid input syntax for type {ty}: \"{s}\""),
    )
}

fn int_range(s: &str, ty: &str) -> PgError {
    PgError::new(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("value \"{s}\" is out of range for type {ty}"),
    )
}

/// Integer input as pg_strtoint: optional whitespace, sign, decimal digits, whitespace.
fn parse_int(s: &str, ty: &str) -> PgResult<i64> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    let mut neg = false;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        neg = b[i] == b'-';
        i += 1;
    }
    let start = i;
    // Accumulate negatively so i64::MIN parses.
    let mut v: i64 = 0;
    let mut overflow = false;
    while i < b.len() && b[i].is_ascii_digit() {
        let d = (b[i] - b'0') as i64;
        match v.checked_mul(10).and_then(|x| x.checked_sub(d)) {
            Some(x) => v = x,
            None => overflow = true,
        }
        i += 1;
    }
    if i == start {
        return Err(syntax(ty, s));
    }
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    if i != b.len() {
        return Err(syntax(ty, s));
    }
    if overflow {
        return Err(int_range(s, ty));
    }
    if neg {
        Ok(v)
    } else {
        v.checked_neg().ok_or_else(|| int_range(s, ty))
    }
}

fn parse_bool(s: &str) -> PgResult<bool> {
    let t = s.trim().to_ascii_lowercase();
    let r = match t.as_str() {
        "t" | "tr" | "tru" | "true" | "y" | "ye" | "yes" | "on" | "1" => Some(true),
        "f" | "fa" | "fal" | "fals" | "false" | "n" | "no" | "of" | "off" | "0" => Some(false),
        _ => None,
    };
    r.ok_or_else(|| syntax("boolean", s))
}

fn parse_float_common(s: &str, ty: &str) -> PgResult<f64> {
    let t = s.trim_matches(|c: char| c.is_ascii_whitespace());
    let lower = t.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    let v = match body {
        "inf" | "infinity" => {
            if lower.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }
        }
        "nan" if !lower.starts_with(['+', '-']) => f64::NAN,
        _ => {
            // Rust accepts words like "infinity" above; here only decimal syntax is allowed.
            if body.is_empty()
                || !body
                    .bytes()
                    .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'+' | b'-'))
            {
                return Err(syntax(ty, s));
            }
            let v: f64 = t.parse().map_err(|_| syntax(ty, s))?;
            if v.is_infinite() {
                return Err(float_range(s, ty));
            }
            if v == 0.0
                && body.bytes().any(|c| (b'1'..=b'9').contains(&c))
                && !mantissa_is_zero(body)
            {
                return Err(float_range(s, ty));
            }
            v
        }
    };
    Ok(v)
}

fn mantissa_is_zero(body: &str) -> bool {
    let m = body.split(['e']).next().unwrap_or("");
    m.bytes().all(|c| c == b'0' || c == b'.')
}

fn float_range(s: &str, ty: &str) -> PgError {
    PgError::new(
        sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("\"{s}\" is out of range for type {ty}"),
    )
}

fn parse_float8(s: &str) -> PgResult<f64> {
    parse_float_common(s, "double precision")
}

fn parse_float4(s: &str) -> PgResult<f32> {
    let v = parse_float_common(s, "real")?;
    let f = v as f32;
    if (f.is_infinite() && v.is_finite()) || (f == 0.0 && v != 0.0) {
        return Err(float_range(s, "real"));
    }
    Ok(f)
}

fn parse_oid(s: &str) -> PgResult<u32> {
    let v = parse_int(s, "oid").map_err(|e| {
        if e.code == sqlstate::NUMERIC_VALUE_OUT_OF_RANGE {
            int_range(s, "oid")
        } else {
            e
        }
    })?;
    if (i32::MIN as i64..=u32::MAX as i64).contains(&v) {
        Ok(v as u32)
    } else {
        Err(int_range(s, "oid"))
    }
}

/// Truncates to NAMEDATALEN - 1 = 63 bytes at a character boundary.
pub(crate) fn truncate_name(s: &str) -> &str {
    if s.len() <= 63 {
        return s;
    }
    let mut end = 63;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// varchar(n) / char(n) typmod application. `explicit` (an explicit cast) truncates silently;
/// otherwise excess characters must all be spaces, else 22001. char(n) pads with spaces.
pub(crate) fn apply_char_typmod(s: &str, ty: SqlType, explicit: bool) -> PgResult<String> {
    if ty.typmod < 4 {
        return Ok(s.to_owned());
    }
    let n = (ty.typmod - 4) as usize;
    // Fast path: byte length bounds the character count.
    if s.len() <= n && ty.id != TypeId::Bpchar {
        return Ok(s.to_owned());
    }
    let nchars = s.chars().count();
    if nchars > n {
        let cut = s.char_indices().nth(n).map(|(i, _)| i).unwrap_or(s.len());
        if !explicit && !s[cut..].bytes().all(|b| b == b' ') {
            let tyname = if ty.id == TypeId::Bpchar {
                "character"
            } else {
                "character varying"
            };
            return Err(PgError::new(
                sqlstate::STRING_DATA_RIGHT_TRUNCATION,
                format!("value too long for type {tyname}({n})"),
            ));
        }
        return Ok(s[..cut].to_owned());
    }
    let mut out = String::with_capacity(s.len() + n - nchars);
    out.push_str(s);
    if ty.id == TypeId::Bpchar {
        for _ in nchars..n {
            out.push(' ');
        }
    }
    Ok(out)
}

/// The value of one hex digit, either case.
pub(crate) fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

fn parse_bytea(s: &str) -> PgResult<Vec<u8>> {
    let b = s.as_bytes();
    if b.len() >= 2 && b[0] == b'\\' && (b[1] == b'x' || b[1] == b'X') {
        let mut out = Vec::with_capacity((b.len() - 2) / 2);
        let mut i = 2;
        while i < b.len() {
            if b[i].is_ascii_whitespace() {
                i += 1;
                continue;
            }
            let bad_digit = |at: usize| {
                let ch = s[at..].chars().next().unwrap_or('?');
                PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    format!("invalid hexadecimal digit: \"{ch}\""),
                )
            };
            let hi = hex_val(b[i]).ok_or_else(|| bad_digit(i))?;
            i += 1;
            if i >= b.len() || b[i].is_ascii_whitespace() {
                return Err(PgError::new(
                    sqlstate::INVALID_PARAMETER_VALUE,
                    "invalid hexadecimal data: odd number of digits",
                ));
            }
            let lo = hex_val(b[i]).ok_or_else(|| bad_digit(i))?;
            i += 1;
            out.push(hi << 4 | lo);
        }
        return Ok(out);
    }
    // Escape format: `\\` is a backslash, `\ooo` an octal byte, anything else literal.
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            out.push(b[i]);
            i += 1;
        } else if i + 1 < b.len() && b[i + 1] == b'\\' {
            out.push(b'\\');
            i += 2;
        } else if i + 3 < b.len()
            && (b'0'..=b'3').contains(&b[i + 1])
            && (b'0'..=b'7').contains(&b[i + 2])
            && (b'0'..=b'7').contains(&b[i + 3])
        {
            out.push(((b[i + 1] - b'0') << 6) | ((b[i + 2] - b'0') << 3) | (b[i + 3] - b'0'));
            i += 4;
        } else {
            return Err(PgError::new(
                sqlstate::INVALID_TEXT_REPRESENTATION,
                "invalid input syntax for type bytea",
            ));
        }
    }
    Ok(out)
}

/// Output function: appends the text form PostgreSQL prints. `Datum::Null` appends nothing.
pub fn format_text(value: &Datum, ty: TypeId, out: &mut String) {
    match value {
        Datum::Null => {}
        Datum::Bool(b) => out.push(if *b { 't' } else { 'f' }),
        Datum::Int2(v) => out.push_str(itoa::Buffer::new().format(*v)),
        Datum::Int4(v) => out.push_str(itoa::Buffer::new().format(*v)),
        Datum::Int8(v) => out.push_str(itoa::Buffer::new().format(*v)),
        Datum::Oid(v) => out.push_str(itoa::Buffer::new().format(*v)),
        Datum::Float4(v) => format_float(*v as f64, true, out),
        Datum::Float8(v) => format_float(*v, false, out),
        Datum::Numeric(n) => n.write_text(out),
        Datum::Text(s) => out.push_str(s),
        Datum::Bytea(b) => {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.reserve(2 + b.len() * 2);
            out.push_str("\\x");
            for &c in b {
                out.push(HEX[(c >> 4) as usize] as char);
                out.push(HEX[(c & 15) as usize] as char);
            }
        }
        Datum::Date(d) => datetime::format_date(*d, out),
        Datum::Timestamp(t) => datetime::format_timestamp(*t, false, out),
        Datum::TimestampTz(t) => datetime::format_timestamp(*t, true, out),
        Datum::Interval(iv) => iv.write_text(out),
        Datum::Array(a) if ty.is_vector() => crate::array::write_vector(a, out),
        Datum::Array(a) => crate::array::write_text(a, out),
        Datum::Record(r) => crate::record::write_text(r, out),
        Datum::Uuid(u) => crate::uuid::write_text(u, out),
    }
}

/// Convenience: the text form as a new String.
pub fn to_text(value: &Datum) -> String {
    let mut s = String::new();
    format_text(value, value.natural_type().unwrap_or(TypeId::Text), &mut s);
    s
}

/// PostgreSQL 15's shortest-exact float output: fixed notation for decimal exponents in
/// [-4, 15) (float8) or [-4, 6) (float4), otherwise `d.ddde+XX`.
pub fn format_float(v: f64, is_float4: bool, out: &mut String) {
    if v.is_nan() {
        out.push_str("NaN");
        return;
    }
    if v.is_infinite() {
        out.push_str(if v > 0.0 { "Infinity" } else { "-Infinity" });
        return;
    }
    if v == 0.0 {
        out.push_str(if v.is_sign_negative() { "-0" } else { "0" });
        return;
    }
    // Shortest round-trip digits from Rust's formatter, as `d.ddde<exp>`.
    let sci = if is_float4 {
        format!("{:e}", v as f32)
    } else {
        format!("{v:e}")
    };
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant
        .bytes()
        .filter(|c| c.is_ascii_digit())
        .map(|c| c as char)
        .collect();
    let limit = if is_float4 { 6 } else { 15 };
    if neg {
        out.push('-');
    }
    if exp < -4 || exp >= limit {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let a = exp.unsigned_abs();
        if a < 10 {
            out.push('0');
        }
        out.push_str(itoa::Buffer::new().format(a));
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.push_str(&digits);
            for _ in digits.len()..int_len {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
}

fn bin_err(msg: &str) -> PgError {
    PgError::new(sqlstate::INVALID_BINARY_REPRESENTATION, msg.to_owned())
}

/// What PostgreSQL's `pq_getmsg*` report when a receive function reads past the value's end.
pub(crate) fn insufficient_data() -> PgError {
    PgError::new(
        sqlstate::PROTOCOL_VIOLATION,
        "insufficient data left in message",
    )
}

/// The first `N` bytes, as `pq_getmsgint` and friends read them.
fn take<const N: usize>(bytes: &[u8]) -> PgResult<[u8; N]> {
    bytes
        .get(..N)
        .and_then(|b| <[u8; N]>::try_from(b).ok())
        .ok_or_else(insufficient_data)
}

/// Binary receive function (the wire's format code 1) for a whole value: as [`recv_binary`],
/// and bytes left over after the value are 22P03.
pub fn parse_binary(bytes: &[u8], ty: SqlType) -> PgResult<Datum> {
    let (value, used) = recv_binary(bytes, ty)?;
    if used != bytes.len() {
        return Err(bin_err("incorrect binary data format"));
    }
    Ok(value)
}

/// Binary receive as PostgreSQL's `typreceive` functions do it: reads what `ty`'s binary
/// form needs from the front of `bytes` and returns the value with the number of bytes read.
/// Too few bytes is 08P01 `insufficient data left in message` (`no data left in message` for
/// a bool), as `pq_getmsgint` reports it; bytes left over are the caller's to report, in its
/// own words (a Bind parameter, an array element).
pub fn recv_binary(bytes: &[u8], ty: SqlType) -> PgResult<(Datum, usize)> {
    Ok(match ty.id {
        TypeId::Bool => match bytes.first() {
            Some(b) => (Datum::Bool(*b != 0), 1),
            None => {
                return Err(PgError::new(
                    sqlstate::PROTOCOL_VIOLATION,
                    "no data left in message",
                ));
            }
        },
        TypeId::Int2 => (Datum::Int2(i16::from_be_bytes(take(bytes)?)), 2),
        TypeId::Int4 => (Datum::Int4(i32::from_be_bytes(take(bytes)?)), 4),
        TypeId::Int8 => (Datum::Int8(i64::from_be_bytes(take(bytes)?)), 8),
        TypeId::Oid | TypeId::RegClass => (Datum::Oid(u32::from_be_bytes(take(bytes)?)), 4),
        TypeId::Float4 => (Datum::Float4(f32::from_be_bytes(take(bytes)?)), 4),
        TypeId::Float8 => (Datum::Float8(f64::from_be_bytes(take(bytes)?)), 8),
        TypeId::Numeric => {
            // ndigits, weight, sign, dscale (2 bytes each), then ndigits base-10000 digits.
            let ndigits = u16::from_be_bytes(take(bytes)?) as usize;
            let used = 8 + 2 * ndigits;
            let b = bytes.get(..used).ok_or_else(insufficient_data)?;
            let n = Numeric::read_binary(b)?.apply_typmod(ty.typmod)?;
            (Datum::Numeric(Box::new(n)), used)
        }
        TypeId::Text
        | TypeId::Unknown
        | TypeId::Varchar
        | TypeId::Bpchar
        | TypeId::Name
        | TypeId::Refcursor => {
            let s = std::str::from_utf8(bytes).map_err(|e| {
                let bad = bytes.get(e.valid_up_to()).copied().unwrap_or(0);
                PgError::new(
                    sqlstate::CHARACTER_NOT_IN_REPERTOIRE,
                    format!("invalid byte sequence for encoding \"UTF8\": 0x{bad:02x}"),
                )
            })?;
            if s.contains('\0') {
                return Err(PgError::new(
                    sqlstate::UNTRANSLATABLE_CHARACTER,
                    "invalid byte sequence for encoding \"UTF8\": 0x00",
                ));
            }
            let v = match ty.id {
                TypeId::Varchar | TypeId::Bpchar => Datum::Text(apply_char_typmod(s, ty, false)?),
                TypeId::Name => Datum::Text(truncate_name(s).to_owned()),
                _ => Datum::Text(s.to_owned()),
            };
            (v, bytes.len())
        }
        TypeId::Bytea => (Datum::Bytea(bytes.to_vec()), bytes.len()),
        TypeId::Date => (Datum::Date(i32::from_be_bytes(take(bytes)?)), 4),
        TypeId::Timestamp => (Datum::Timestamp(i64::from_be_bytes(take(bytes)?)), 8),
        TypeId::TimestampTz => (Datum::TimestampTz(i64::from_be_bytes(take(bytes)?)), 8),
        TypeId::Interval => {
            let b: [u8; 16] = take(bytes)?;
            let micros = i64::from_be_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
            let days = i32::from_be_bytes([b[8], b[9], b[10], b[11]]);
            let months = i32::from_be_bytes([b[12], b[13], b[14], b[15]]);
            let v = Datum::Interval(Interval {
                months,
                days,
                micros,
            });
            (v, 16)
        }
        TypeId::Uuid => (Datum::Uuid(take(bytes)?), 16),
        // void_recv reads nothing.
        TypeId::Void => (Datum::Null, 0),
        t => match t.elem() {
            Some(elem) => {
                let (a, used) =
                    crate::array::read_binary(bytes, SqlType::with_typmod(elem, ty.typmod))?;
                (Datum::Array(std::sync::Arc::new(a)), used)
            }
            None => (Datum::Null, bytes.len()),
        },
    })
}

/// Binary send function (the wire's format code 1).
pub fn format_binary(value: &Datum, ty: TypeId, out: &mut Vec<u8>) {
    match value {
        Datum::Null => {}
        Datum::Bool(b) => out.push(*b as u8),
        Datum::Int2(v) => out.extend_from_slice(&v.to_be_bytes()),
        Datum::Int4(v) => out.extend_from_slice(&v.to_be_bytes()),
        Datum::Int8(v) => out.extend_from_slice(&v.to_be_bytes()),
        Datum::Oid(v) => out.extend_from_slice(&v.to_be_bytes()),
        Datum::Float4(v) => out.extend_from_slice(&v.to_be_bytes()),
        Datum::Float8(v) => out.extend_from_slice(&v.to_be_bytes()),
        Datum::Numeric(n) => n.write_binary(out),
        Datum::Text(s) => out.extend_from_slice(s.as_bytes()),
        Datum::Bytea(b) => out.extend_from_slice(b),
        Datum::Date(d) => out.extend_from_slice(&d.to_be_bytes()),
        Datum::Timestamp(t) | Datum::TimestampTz(t) => out.extend_from_slice(&t.to_be_bytes()),
        Datum::Interval(iv) => {
            out.extend_from_slice(&iv.micros.to_be_bytes());
            out.extend_from_slice(&iv.days.to_be_bytes());
            out.extend_from_slice(&iv.months.to_be_bytes());
        }
        Datum::Array(a) => crate::array::write_binary(a, ty.elem().unwrap_or(a.elem), out),
        Datum::Record(r) => crate::record::write_binary(r, out),
        Datum::Uuid(u) => out.extend_from_slice(u),
    }
    let _ = ty;
}

#[cfg(test)]
#[path = "io_tests.rs"]
mod tests;
