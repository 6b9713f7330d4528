//! Scalar function implementations. Arguments arrive coerced to the resolved types; strict
//! functions never see NULL.

use super::{CHECK_BYTES, FuncContext};
use crate::datetime::{self, UNIX_EPOCH_OFFSET_USECS, USECS_PER_DAY};
use crate::io::format_text;
use crate::limits;
use crate::numeric::Numeric;
use crate::ops::{to_f64, to_numeric};
use crate::{Datum, TypeId};
use keel_common::{PgError, PgResult, sqlstate};
use md5::Digest;

const INVALID_ARGUMENT_FOR_LOG: &str = "2201E";
const INVALID_ARGUMENT_FOR_POWER: &str = "2201F";
const SUBSTRING_ERROR: &str = "22011";

fn mismatch() -> PgError {
    PgError::internal("function called with arguments of unexpected types")
}

fn text(d: &Datum) -> PgResult<&str> {
    match d {
        Datum::Text(s) => Ok(s),
        _ => Err(mismatch()),
    }
}

fn int(d: &Datum) -> PgResult<i64> {
    match d {
        Datum::Int4(v) => Ok(*v as i64),
        Datum::Int2(v) => Ok(*v as i64),
        Datum::Int8(v) => Ok(*v),
        _ => Err(mismatch()),
    }
}

fn num(n: Numeric) -> Datum {
    Datum::Numeric(Box::new(n))
}

pub(super) fn now(_: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(Datum::TimestampTz(ctx.transaction_timestamp()))
}

pub(super) fn statement_timestamp(_: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(Datum::TimestampTz(ctx.statement_timestamp()))
}

/// Current wall-clock time in PostgreSQL's timestamp representation.
pub fn current_timestamp_usecs() -> i64 {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    d - UNIX_EPOCH_OFFSET_USECS
}

pub(super) fn clock_timestamp(_: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(Datum::TimestampTz(current_timestamp_usecs()))
}

pub(super) fn timeofday(_: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    // "Sun Nov 22 10:40:05.123456 2026 UTC"
    let ts = current_timestamp_usecs();
    let days = ts.div_euclid(USECS_PER_DAY);
    let tod = ts.rem_euclid(USECS_PER_DAY);
    let (y, m, d) = datetime::ymd_from_days(days);
    const DOW: [&str; 7] = ["Sat", "Sun", "Mon", "Tue", "Wed", "Thu", "Fri"]; // 2000-01-01 was a Saturday
    const MON: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = tod / 1_000_000;
    Ok(Datum::Text(format!(
        "{} {} {:02} {:02}:{:02}:{:02}.{:06} {} UTC",
        DOW[days.rem_euclid(7) as usize],
        MON[(m - 1) as usize],
        d,
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        tod % 1_000_000,
        y
    )))
}

pub(super) fn gen_random_uuid(_: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(Datum::Uuid(crate::uuid::random_v4()))
}

pub(super) fn random(_: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(Datum::Float8(ctx.random()))
}

pub(super) fn pi(_: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(Datum::Float8(std::f64::consts::PI))
}

/// Hands `s` to `f` in order, in pieces of about [`CHECK_BYTES`] cut at character
/// boundaries, checking for interrupts between pieces: for functions that make one pass over
/// a string of up to 1 GB. A string shorter than a piece costs no check.
fn in_pieces<'s>(
    s: &'s str,
    ctx: &mut dyn FuncContext,
    mut f: impl FnMut(&'s str),
) -> PgResult<()> {
    let mut rest = s;
    loop {
        let mut cut = rest.len().min(CHECK_BYTES);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (piece, tail) = rest.split_at(cut);
        f(piece);
        if tail.is_empty() {
            return Ok(());
        }
        ctx.check_interrupts()?;
        rest = tail;
    }
}

/// Characters in `s`, counted a piece at a time (see [`in_pieces`]).
fn count_chars(s: &str, ctx: &mut dyn FuncContext) -> PgResult<usize> {
    let mut n = 0;
    in_pieces(s, ctx, |p| n += p.chars().count())?;
    Ok(n)
}

pub(super) fn md5(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    let bytes: &[u8] = match &a[0] {
        Datum::Text(s) => s.as_bytes(),
        Datum::Bytea(b) => b,
        _ => return Err(mismatch()),
    };
    let mut hasher = md5::Md5::new();
    for (i, piece) in bytes.chunks(CHECK_BYTES).enumerate() {
        if i > 0 {
            ctx.check_interrupts()?;
        }
        hasher.update(piece);
    }
    let digest = hasher.finalize();
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(32);
    for b in digest {
        s.push(HEX[(b >> 4) as usize] as char);
        s.push(HEX[(b & 15) as usize] as char);
    }
    Ok(Datum::Text(s))
}

pub(super) fn abs(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    (crate::ops::resolve_unary("@", a[0].natural_type().ok_or_else(mismatch)?)
        .ok_or_else(mismatch)?
        .2)(&a[0])
}

pub(super) fn char_length(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(Datum::Int4(count_chars(text(&a[0])?, ctx)? as i32))
}

pub(super) fn bpchar_length(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    let s = text(&a[0])?.trim_end_matches(' ');
    Ok(Datum::Int4(count_chars(s, ctx)? as i32))
}

pub(super) fn octet_length(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(Datum::Int4(match &a[0] {
        Datum::Text(s) => s.len(),
        Datum::Bytea(b) => b.len(),
        _ => return Err(mismatch()),
    } as i32))
}

/// `s` with `map` applied a piece at a time (see [`in_pieces`]).
fn map_pieces(s: &str, ctx: &mut dyn FuncContext, map: impl Fn(&mut str)) -> PgResult<Datum> {
    let mut out = String::with_capacity(s.len());
    in_pieces(s, ctx, |p| {
        let start = out.len();
        out.push_str(p);
        map(&mut out[start..]);
    })?;
    Ok(Datum::Text(out))
}

// Collation "C": case mapping touches ASCII letters only, as PostgreSQL under LC_CTYPE C.
pub(super) fn lower(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    map_pieces(text(&a[0])?, ctx, str::make_ascii_lowercase)
}

pub(super) fn upper(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    map_pieces(text(&a[0])?, ctx, str::make_ascii_uppercase)
}

pub(super) fn initcap(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    let s = text(&a[0])?;
    let mut out = String::with_capacity(s.len());
    let mut in_word = false;
    in_pieces(s, ctx, |p| {
        for c in p.chars() {
            if in_word {
                out.push(c.to_ascii_lowercase());
            } else {
                out.push(c.to_ascii_uppercase());
            }
            in_word = c.is_ascii_alphanumeric();
        }
    })?;
    Ok(Datum::Text(out))
}

pub(super) fn reverse(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    let s = text(&a[0])?;
    let mut pieces = Vec::new();
    in_pieces(s, ctx, |p| pieces.push(p))?;
    let mut out = String::with_capacity(s.len());
    for (i, p) in pieces.iter().rev().enumerate() {
        if i > 0 {
            ctx.check_interrupts()?;
        }
        out.extend(p.chars().rev());
    }
    Ok(Datum::Text(out))
}

pub(super) fn ascii(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(Datum::Int4(
        text(&a[0])?.chars().next().map(|c| c as i32).unwrap_or(0),
    ))
}

pub(super) fn chr(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let n = int(&a[0])?;
    if n == 0 {
        return Err(PgError::new(
            sqlstate::PROGRAM_LIMIT_EXCEEDED,
            "null character not permitted",
        ));
    }
    if n < 0 {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            "character number must be positive",
        ));
    }
    let c = char::from_u32(n as u32).ok_or_else(|| {
        PgError::new(
            sqlstate::PROGRAM_LIMIT_EXCEEDED,
            format!("requested character too large for encoding: {n}"),
        )
    })?;
    Ok(Datum::Text(c.to_string()))
}

pub(super) fn to_hex(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(Datum::Text(match &a[0] {
        Datum::Int8(v) => format!("{:x}", *v as u64),
        other => format!("{:x}", int(other)? as i32 as u32),
    }))
}

/// Byte offset of the `n`th character (clamped to the end).
fn char_offset(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map(|(i, _)| i).unwrap_or(s.len())
}

pub(super) fn substr(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let start = int(&a[1])?;
    let len = a.get(2).map(int).transpose()?;
    if let Some(l) = len
        && l < 0
    {
        return Err(PgError::new(
            SUBSTRING_ERROR,
            "negative substring length not allowed",
        ));
    }
    // Characters [start, start + len) in 1-based positions, clipped to the string.
    let from = (start.max(1) - 1) as usize;
    let to = len.map(|l| (start.saturating_add(l) - 1).max(0) as usize);
    match &a[0] {
        Datum::Text(s) => {
            let b = char_offset(s, from);
            let e = match to {
                Some(t) if t <= from => return Ok(Datum::Text(String::new())),
                Some(t) => b + char_offset(&s[b..], t - from),
                None => s.len(),
            };
            Ok(Datum::Text(s[b..e].to_owned()))
        }
        Datum::Bytea(v) => {
            let b = from.min(v.len());
            let e = to.map(|t| t.min(v.len()).max(b)).unwrap_or(v.len());
            Ok(Datum::Bytea(v[b..e].to_vec()))
        }
        _ => Err(mismatch()),
    }
}

pub(super) fn strpos(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    let (s, sub) = (text(&a[0])?, text(&a[1])?);
    Ok(Datum::Int4(match s.find(sub) {
        Some(i) => count_chars(&s[..i], ctx)? as i32 + 1,
        None => 0,
    }))
}

pub(super) fn starts_with(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(Datum::Bool(text(&a[0])?.starts_with(text(&a[1])?)))
}

/// Checks for interrupts each time the result grows by [`CHECK_BYTES`].
pub(super) fn replace(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    let (s, from, to) = (text(&a[0])?, text(&a[1])?, text(&a[2])?);
    if from.is_empty() {
        return Ok(Datum::Text(s.to_owned()));
    }
    if to.len() > from.len() {
        let matches = s.matches(from).count();
        let grown = s.len() + matches * (to.len() - from.len());
        if grown > limits::MAX_VALUE_LEN {
            // The buffer's error where PostgreSQL's comes, else the copy into the result's.
            replace_appends(s, from, to)?;
            limits::varlena(grown)?;
        }
    }
    let mut out = String::new();
    let mut next_check = CHECK_BYTES;
    let mut copied = 0;
    for (at, _) in s.match_indices(from) {
        out.push_str(&s[copied..at]);
        out.push_str(to);
        copied = at + from.len();
        if out.len() >= next_check {
            ctx.check_interrupts()?;
            next_check = out.len() + CHECK_BYTES;
        }
    }
    out.push_str(&s[copied..]);
    Ok(Datum::Text(out))
}

/// PostgreSQL's `replace` appends the text before each match, then the replacement, then the
/// tail to a growing buffer: its buffer error, replayed on lengths only (nothing is built).
fn replace_appends(s: &str, from: &str, to: &str) -> PgResult<()> {
    fn append(len: &mut usize, more: usize) -> PgResult<()> {
        limits::enlarge(*len, more)?;
        *len += more;
        Ok(())
    }
    let (mut len, mut at) = (0usize, 0usize);
    for (i, _) in s.match_indices(from) {
        append(&mut len, i - at)?;
        append(&mut len, to.len())?;
        at = i + from.len();
    }
    append(&mut len, s.len() - at)
}

pub(super) fn split_part(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let (s, delim, n) = (text(&a[0])?, text(&a[1])?, int(&a[2])?);
    if n == 0 {
        return Err(PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            "field position must not be zero",
        ));
    }
    if delim.is_empty() {
        return Ok(Datum::Text(if n == 1 || n == -1 {
            s.to_owned()
        } else {
            String::new()
        }));
    }
    let parts: Vec<&str> = s.split(delim).collect();
    let idx = if n > 0 { n - 1 } else { parts.len() as i64 + n };
    Ok(Datum::Text(
        usize::try_from(idx)
            .ok()
            .and_then(|i| parts.get(i))
            .map(|p| p.to_string())
            .unwrap_or_default(),
    ))
}

/// Checks for interrupts between copies of at most [`CHECK_BYTES`] (a 1 GB result takes about
/// a second to build), as PostgreSQL's repeat() does between copies.
pub(super) fn repeat(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    let (s, n) = (text(&a[0])?, int(&a[1])?);
    if n <= 0 || s.is_empty() {
        return Ok(Datum::Text(String::new()));
    }
    // PostgreSQL sizes the result first: count * length plus the varlena header must fit.
    if (s.len() as u64).saturating_mul(n as u64) > limits::MAX_VALUE_LEN as u64 {
        return Err(limits::requested_length_too_large());
    }
    let n = n as usize;
    let per_check = (CHECK_BYTES / s.len()).max(1);
    if n <= per_check {
        return Ok(Datum::Text(s.repeat(n)));
    }
    let block = s.repeat(per_check);
    let mut out = String::with_capacity(s.len() * n);
    let mut left = n;
    while left > 0 {
        ctx.check_interrupts()?;
        let k = left.min(per_check);
        out.push_str(&block[..k * s.len()]);
        left -= k;
    }
    Ok(Datum::Text(out))
}

pub(super) fn left(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let (s, n) = (text(&a[0])?, int(&a[1])?);
    let count = s.chars().count() as i64;
    let keep = if n >= 0 {
        n.min(count)
    } else {
        (count + n).max(0)
    };
    Ok(Datum::Text(s[..char_offset(s, keep as usize)].to_owned()))
}

pub(super) fn right(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let (s, n) = (text(&a[0])?, int(&a[1])?);
    let count = s.chars().count() as i64;
    let skip = if n >= 0 {
        (count - n).max(0)
    } else {
        (-n).min(count)
    };
    Ok(Datum::Text(s[char_offset(s, skip as usize)..].to_owned()))
}

fn trim_set(a: &[Datum]) -> PgResult<Vec<char>> {
    Ok(match a.get(1) {
        Some(d) => text(d)?.chars().collect(),
        None => vec![' '],
    })
}

pub(super) fn btrim(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let set = trim_set(a)?;
    Ok(Datum::Text(
        text(&a[0])?.trim_matches(|c| set.contains(&c)).to_owned(),
    ))
}

pub(super) fn ltrim(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let set = trim_set(a)?;
    Ok(Datum::Text(
        text(&a[0])?
            .trim_start_matches(|c| set.contains(&c))
            .to_owned(),
    ))
}

pub(super) fn rtrim(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let set = trim_set(a)?;
    Ok(Datum::Text(
        text(&a[0])?
            .trim_end_matches(|c| set.contains(&c))
            .to_owned(),
    ))
}

fn pad(a: &[Datum], left: bool, ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    let (s, len) = (text(&a[0])?, int(&a[1])?);
    let fill = match a.get(2) {
        Some(d) => text(d)?,
        None => " ",
    };
    // `len` is an int4, so four times it fits a usize.
    let len = len.max(0) as usize;
    let count = s.chars().count();
    // PostgreSQL sizes the result for the longest encoding (4 bytes a character in UTF-8);
    // with nothing to pad with, the length is the string's, cut to `len`.
    let chars = if fill.is_empty() { count.min(len) } else { len };
    if chars.saturating_mul(4) > limits::MAX_VALUE_LEN {
        return Err(limits::requested_length_too_large());
    }
    if count >= len || fill.is_empty() {
        return Ok(Datum::Text(s[..char_offset(s, len)].to_owned()));
    }
    // Up to 2^28 characters: checks for interrupts every CHECK_BYTES characters.
    let mut padding = String::with_capacity(len - count);
    let mut fill = fill.chars().cycle();
    let mut missing = len - count;
    loop {
        let k = missing.min(CHECK_BYTES);
        padding.extend(fill.by_ref().take(k));
        missing -= k;
        if missing == 0 {
            break;
        }
        ctx.check_interrupts()?;
    }
    Ok(Datum::Text(if left {
        padding + s
    } else {
        format!("{s}{padding}")
    }))
}

pub(super) fn lpad(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    pad(a, true, ctx)
}

pub(super) fn rpad(a: &[Datum], ctx: &mut dyn FuncContext) -> PgResult<Datum> {
    pad(a, false, ctx)
}

/// Appends `d`'s text form as PostgreSQL's `concat` does (output function, then append to the
/// growing buffer), with the errors each step raises past 1 GB.
fn push_value(d: &Datum, out: &mut String) -> PgResult<()> {
    if let Datum::Text(s) = d {
        limits::enlarge(out.len(), s.len())?;
        out.push_str(s);
        return Ok(());
    }
    limits::text_out(d)?;
    let mut v = String::new();
    format_text(d, d.natural_type().unwrap_or(TypeId::Text), &mut v);
    limits::enlarge(out.len(), v.len())?;
    out.push_str(&v);
    Ok(())
}

pub(super) fn concat(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let mut out = String::new();
    for d in a {
        if !d.is_null() {
            push_value(d, &mut out)?;
        }
    }
    limits::varlena(out.len())?;
    Ok(Datum::Text(out))
}

pub(super) fn concat_ws(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let sep = match &a[0] {
        Datum::Null => return Ok(Datum::Null),
        d => text(d)?,
    };
    let mut out = String::new();
    let mut first = true;
    for d in &a[1..] {
        if d.is_null() {
            continue;
        }
        if !first {
            limits::enlarge(out.len(), sep.len())?;
            out.push_str(sep);
        }
        first = false;
        push_value(d, &mut out)?;
    }
    limits::varlena(out.len())?;
    Ok(Datum::Text(out))
}

fn scale_arg(a: &[Datum]) -> PgResult<i64> {
    a.get(1).map(int).transpose().map(|s| s.unwrap_or(0))
}

pub(super) fn num_round(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let s = scale_arg(a)?.clamp(-2000, 2000);
    Ok(num(to_numeric(&a[0])?.round(s)))
}

pub(super) fn num_trunc(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let s = scale_arg(a)?.clamp(-2000, 2000);
    Ok(num(to_numeric(&a[0])?.trunc(s)))
}

pub(super) fn num_floor(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let n = to_numeric(&a[0])?;
    let t = n.trunc(0);
    Ok(num(if t.cmp_total(&n).is_gt() {
        t.sub(&Numeric::from_i64(1))
    } else {
        t
    }))
}

pub(super) fn num_ceil(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let n = to_numeric(&a[0])?;
    let t = n.trunc(0);
    Ok(num(if t.cmp_total(&n).is_lt() {
        t.add(&Numeric::from_i64(1))
    } else {
        t
    }))
}

pub(super) fn num_sign(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let n = to_numeric(&a[0])?;
    Ok(num(match n.signum() {
        None => Numeric::NaN,
        Some(s) => Numeric::from_i64(s as i64),
    }))
}

pub(crate) fn float_power(x: f64, y: f64) -> PgResult<f64> {
    if x == 0.0 && y < 0.0 {
        return Err(PgError::new(
            INVALID_ARGUMENT_FOR_POWER,
            "zero raised to a negative power is undefined",
        ));
    }
    if x < 0.0 && y.is_finite() && y.fract() != 0.0 {
        return Err(PgError::new(
            INVALID_ARGUMENT_FOR_POWER,
            "a negative number raised to a non-integer power yields a complex result",
        ));
    }
    let r = x.powf(y);
    if r.is_infinite() && x.is_finite() && y.is_finite() {
        return Err(crate::ops::imp_float_overflow());
    }
    if r == 0.0 && x != 0.0 && x.is_finite() && y.is_finite() {
        return Err(PgError::new(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            "value out of range: underflow",
        ));
    }
    Ok(r)
}

pub(super) fn num_mod(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(num(to_numeric(&a[0])?.rem(&to_numeric(&a[1])?)?))
}

pub(super) fn int_mod(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let op = crate::ops::resolve_binary(
        "%",
        a[0].natural_type().ok_or_else(mismatch)?,
        a[1].natural_type().ok_or_else(mismatch)?,
    )
    .ok_or_else(mismatch)?;
    (op.func)(&a[0], &a[1])
}

fn float_fn(a: &[Datum], g: fn(f64) -> f64) -> PgResult<Datum> {
    Ok(Datum::Float8(g(to_f64(&a[0])?)))
}

pub(super) fn f_round(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    float_fn(a, f64::round_ties_even)
}
pub(super) fn f_trunc(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    float_fn(a, f64::trunc)
}
pub(super) fn f_floor(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    float_fn(a, f64::floor)
}
pub(super) fn f_ceil(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    float_fn(a, f64::ceil)
}
pub(super) fn f_sign(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    float_fn(a, |x| {
        if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            0.0
        }
    })
}
pub(super) fn f_sqrt(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let x = to_f64(&a[0])?;
    if x < 0.0 {
        return Err(PgError::new(
            INVALID_ARGUMENT_FOR_POWER,
            "cannot take square root of a negative number",
        ));
    }
    Ok(Datum::Float8(x.sqrt()))
}
pub(super) fn f_exp(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let x = to_f64(&a[0])?;
    let r = x.exp();
    if r.is_infinite() && x.is_finite() {
        return Err(crate::ops::imp_float_overflow());
    }
    if r == 0.0 && x.is_finite() {
        return Err(PgError::new(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            "value out of range: underflow",
        ));
    }
    Ok(Datum::Float8(r))
}
fn f_log_common(a: &[Datum], g: fn(f64) -> f64) -> PgResult<Datum> {
    let x = to_f64(&a[0])?;
    if x == 0.0 {
        return Err(PgError::new(
            INVALID_ARGUMENT_FOR_LOG,
            "cannot take logarithm of zero",
        ));
    }
    if x < 0.0 {
        return Err(PgError::new(
            INVALID_ARGUMENT_FOR_LOG,
            "cannot take logarithm of a negative number",
        ));
    }
    Ok(Datum::Float8(g(x)))
}
pub(super) fn f_ln(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    f_log_common(a, f64::ln)
}
pub(super) fn f_log10(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    f_log_common(a, f64::log10)
}
pub(super) fn f_power(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    Ok(Datum::Float8(float_power(to_f64(&a[0])?, to_f64(&a[1])?)?))
}

/// div(numeric, numeric): the quotient truncated toward zero, scale 0.
pub(super) fn num_div_trunc(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let (x, y) = (to_numeric(&a[0])?, to_numeric(&a[1])?);
    if y.is_zero() && !matches!(x, Numeric::NaN) {
        return Err(PgError::new(sqlstate::DIVISION_BY_ZERO, "division by zero"));
    }
    let (Some(p), Some(q)) = (x.big(), y.big()) else {
        // NaN or infinities: the plain quotient already has the right special value.
        return Ok(num(x.div(&y)?));
    };
    let (pu, ps) = p.as_bigint_and_exponent();
    let (qu, qs) = q.as_bigint_and_exponent();
    // p/q = (pu * 10^qs) / (qu * 10^ps); BigInt division truncates toward zero.
    let ten = bigdecimal::num_bigint::BigInt::from(10u8);
    let n = pu * ten.pow(qs.max(0) as u32);
    let d = qu * ten.pow(ps.max(0) as u32);
    Ok(num(crate::numeric::finite(n / d, 0)))
}

/// overlay(t placing p from s [for n]): t's first s-1 characters, then p, then t from
/// character s+n on (n defaults to p's length).
pub(super) fn overlay(a: &[Datum], _: &mut dyn FuncContext) -> PgResult<Datum> {
    let (t, p, start) = (text(&a[0])?, text(&a[1])?, int(&a[2])?);
    let count = match a.get(3) {
        Some(d) => int(d)?,
        None => p.chars().count() as i64,
    };
    // A negative count is allowed: the tail then starts before `start` (even at 1).
    if start < 1 {
        return Err(PgError::new(
            SUBSTRING_ERROR,
            "negative substring length not allowed",
        ));
    }
    let resume = start
        .checked_add(count)
        .filter(|v| *v <= i32::MAX as i64 && *v >= i32::MIN as i64);
    let Some(resume) = resume else {
        return Err(PgError::new(
            sqlstate::NUMERIC_VALUE_OUT_OF_RANGE,
            "integer out of range",
        ));
    };
    let head = &t[..char_offset(t, (start - 1) as usize)];
    let tail = &t[char_offset(t, (resume - 1).max(0) as usize)..];
    // PostgreSQL concatenates twice (head || p, then || tail), allocating each result whole.
    limits::varlena(head.len() + p.len())?;
    limits::varlena(head.len() + p.len() + tail.len())?;
    let mut out = String::with_capacity(head.len() + p.len() + tail.len());
    out.push_str(head);
    out.push_str(p);
    out.push_str(tail);
    Ok(Datum::Text(out))
}
