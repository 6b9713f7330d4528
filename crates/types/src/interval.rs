//! PostgreSQL `interval`: months, days and microseconds kept apart, as PostgreSQL does.

use crate::datetime::{USECS_PER_DAY, USECS_PER_SEC, push_fraction};
use keel_common::{PgError, PgResult, sqlstate};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Interval {
    pub months: i32,
    pub days: i32,
    pub micros: i64,
}

fn interval_overflow() -> PgError {
    PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "interval out of range")
}

impl Interval {
    /// The comparison key PostgreSQL uses: a month is 30 days, a day 24 hours.
    pub fn cmp_key(&self) -> i128 {
        (self.months as i128 * 30 + self.days as i128) * USECS_PER_DAY as i128 + self.micros as i128
    }

    /// Appends the `postgres` IntervalStyle form: `1 year 2 mons 3 days 04:05:06.789`.
    pub fn write_text(&self, out: &mut String) {
        let mut is_zero = true;
        let mut is_before = false;
        let years = self.months / 12;
        let mons = self.months % 12;
        let mut part = |out: &mut String, v: i64, unit: &str| {
            if v == 0 {
                return;
            }
            if !is_zero {
                out.push(' ');
            }
            if is_before && v > 0 {
                out.push('+');
            }
            out.push_str(itoa::Buffer::new().format(v));
            out.push(' ');
            out.push_str(unit);
            if v != 1 {
                out.push('s');
            }
            is_before = v < 0;
            is_zero = false;
        };
        part(out, years as i64, "year");
        part(out, mons as i64, "mon");
        part(out, self.days as i64, "day");
        if is_zero || self.micros != 0 {
            if !is_zero {
                out.push(' ');
            }
            let neg = self.micros < 0;
            if neg {
                out.push('-');
            } else if is_before {
                out.push('+');
            }
            let a = self.micros.unsigned_abs();
            let secs = a / USECS_PER_SEC as u64;
            let hours = secs / 3600;
            if hours < 10 {
                out.push('0');
            }
            out.push_str(itoa::Buffer::new().format(hours));
            out.push(':');
            let m = (secs / 60 % 60) as u8;
            out.push((b'0' + m / 10) as char);
            out.push((b'0' + m % 10) as char);
            out.push(':');
            let s = (secs % 60) as u8;
            out.push((b'0' + s / 10) as char);
            out.push((b'0' + s % 10) as char);
            push_fraction(out, (a % USECS_PER_SEC as u64) as i64);
        }
    }

    /// Parses the `postgres` and SQL-standard-ish forms: `1 year 2 mons`, `04:05:06`,
    /// `@ 1 day ago`, `1.5 days`, a bare number (seconds).
    pub fn parse(s: &str) -> PgResult<Interval> {
        let bad = || {
            PgError::new(
                sqlstate::INVALID_DATETIME_FORMAT,
                format!("invalid input syntax for type interval: \"{s}\""),
            )
        };
        let lower = s.trim().to_ascii_lowercase();
        if let Some(rest) = s.strip_prefix('P') {
            return parse_iso8601(rest).ok_or_else(bad)?;
        }
        let mut tokens: Vec<&str> = lower.split_ascii_whitespace().collect();
        if tokens.first() == Some(&"@") {
            tokens.remove(0);
        }
        let mut ago = false;
        if tokens.last() == Some(&"ago") {
            ago = true;
            tokens.pop();
        }
        if tokens.is_empty() {
            return Err(bad());
        }
        // Accumulate in f64-free fixed point: months, days, micros (i128 to detect overflow).
        let (mut months, mut days, mut micros) = (0i128, 0i128, 0i128);
        let mut i = 0;
        while i < tokens.len() {
            let tok = tokens[i];
            if tok.contains(':') {
                let neg = tok.starts_with('-');
                let t = tok.trim_start_matches(['-', '+']);
                let parts: Vec<&str> = t.split(':').collect();
                if parts.len() > 3 {
                    return Err(bad());
                }
                let h: i128 = parts[0].parse().map_err(|_| bad())?;
                let m: i128 = parts
                    .get(1)
                    .map(|p| p.parse())
                    .transpose()
                    .map_err(|_| bad())?
                    .unwrap_or(0);
                let sec = parts
                    .get(2)
                    .map(|p| parse_secs(p))
                    .transpose()?
                    .unwrap_or(Some(0))
                    .ok_or_else(bad)?;
                let v = (h * 3600 + m * 60) * USECS_PER_SEC as i128 + sec;
                micros += if neg { -v } else { v };
                i += 1;
                continue;
            }
            // A number, optionally glued to its unit ("5d"); then a unit token.
            let split = tok
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
                .unwrap_or(tok.len());
            let (num, mut unit) = tok.split_at(split);
            if num.is_empty() {
                return Err(bad());
            }
            // SQL-standard year-month field: `1-2` is 1 year 2 months, `-1-2` both negative.
            if unit.is_empty()
                && let Some((y, m)) = num[1..]
                    .split_once('-')
                    .map(|(y, m)| (&num[..y.len() + 1], m))
                && let (Ok(y), Ok(m)) = (y.parse::<i128>(), m.parse::<i128>())
            {
                let total = y.abs() * 12 + m;
                months += if y < 0 || num.starts_with('-') {
                    -total
                } else {
                    total
                };
                i += 1;
                continue;
            }
            let value: f64 = num.parse().map_err(|_| bad())?;
            if unit.is_empty() {
                if i + 1 < tokens.len()
                    && !tokens[i + 1].contains(':')
                    && tokens[i + 1].starts_with(|c: char| c.is_ascii_alphabetic())
                {
                    unit = tokens[i + 1];
                    i += 1;
                } else if tokens.get(i + 1).is_some_and(|t| t.contains(':')) {
                    // SQL-standard day-time: `3 4:05:06` is 3 days 04:05:06.
                    unit = "day";
                } else {
                    unit = "second";
                }
            }
            let (m, d, us): (f64, f64, f64) = match unit.trim_end_matches(',') {
                "microsecond" | "microseconds" | "us" | "usec" | "usecs" => (0.0, 0.0, 1.0),
                "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" => (0.0, 0.0, 1e3),
                "second" | "seconds" | "s" | "sec" | "secs" => (0.0, 0.0, 1e6),
                "minute" | "minutes" | "m" | "min" | "mins" => (0.0, 0.0, 6e7),
                "hour" | "hours" | "h" | "hr" | "hrs" => (0.0, 0.0, 3.6e9),
                "day" | "days" | "d" => (0.0, 1.0, 0.0),
                "week" | "weeks" | "w" => (0.0, 7.0, 0.0),
                "month" | "months" | "mon" | "mons" => (1.0, 0.0, 0.0),
                "year" | "years" | "y" | "yr" | "yrs" => (12.0, 0.0, 0.0),
                "decade" | "decades" => (120.0, 0.0, 0.0),
                "century" | "centuries" => (1200.0, 0.0, 0.0),
                "millennium" | "millennia" => (12000.0, 0.0, 0.0),
                _ => return Err(bad()),
            };
            add_unit(value, (m, d, us), (&mut months, &mut days, &mut micros));
            i += 1;
        }
        if ago {
            months = -months;
            days = -days;
            micros = -micros;
        }
        from_parts(months, days, micros)
    }

    pub fn neg(&self) -> PgResult<Interval> {
        Ok(Interval {
            months: self.months.checked_neg().ok_or_else(interval_overflow)?,
            days: self.days.checked_neg().ok_or_else(interval_overflow)?,
            micros: self.micros.checked_neg().ok_or_else(interval_overflow)?,
        })
    }

    pub fn add(&self, o: &Interval) -> PgResult<Interval> {
        Ok(Interval {
            months: self
                .months
                .checked_add(o.months)
                .ok_or_else(interval_overflow)?,
            days: self
                .days
                .checked_add(o.days)
                .ok_or_else(interval_overflow)?,
            micros: self
                .micros
                .checked_add(o.micros)
                .ok_or_else(interval_overflow)?,
        })
    }

    pub fn sub(&self, o: &Interval) -> PgResult<Interval> {
        self.add(&o.neg()?)
    }

    /// interval * float8, cascading fractional months and days down (interval_mul).
    pub fn mul_f64(&self, f: f64) -> PgResult<Interval> {
        let mv = self.months as f64 * f;
        let m = mv.trunc();
        let dv = self.days as f64 * f + (mv - m) * 30.0;
        let d = dv.trunc();
        let us = self.micros as f64 * f + (dv - d) * USECS_PER_DAY as f64;
        if !m.is_finite()
            || m.abs() > i32::MAX as f64
            || d.abs() > i32::MAX as f64
            || !us.is_finite()
            || us.abs() > i64::MAX as f64
        {
            return Err(interval_overflow());
        }
        Ok(Interval {
            months: m as i32,
            days: d as i32,
            micros: us.round() as i64,
        })
    }
}

fn from_parts(months: i128, days: i128, micros: i128) -> PgResult<Interval> {
    Ok(Interval {
        months: i32::try_from(months).map_err(|_| interval_overflow())?,
        days: i32::try_from(days).map_err(|_| interval_overflow())?,
        micros: i64::try_from(micros).map_err(|_| interval_overflow())?,
    })
}

/// Adds `value` of a unit worth `(months, days, micros)` to the accumulators. Fractions
/// cascade down: fractional months become days (30/month), fractional days become time, as
/// PostgreSQL's AdjustFractDays/AdjustFractSeconds.
fn add_unit(
    value: f64,
    (m, d, us): (f64, f64, f64),
    (months, days, micros): (&mut i128, &mut i128, &mut i128),
) {
    let mv = value * m;
    let whole_m = mv.trunc();
    // A fractional year (or decade, ...) yields whole months only, as PostgreSQL 15.
    let carry = if m > 1.0 { 0.0 } else { mv - whole_m };
    let dv = value * d + carry * 30.0;
    let whole_d = dv.trunc();
    let uv = value * us + (dv - whole_d) * USECS_PER_DAY as f64;
    *months += whole_m as i128;
    *days += whole_d as i128;
    *micros += uv.round() as i128;
}

/// ISO 8601 input after the leading `P` (case-sensitive, no surrounding spaces, as
/// PostgreSQL's DecodeISO8601Interval). Accepts the format with designators
/// (`1Y2M3W4DT5H6M7.5S`; `M` is months before the `T`, minutes after it) and the alternative
/// format (`0001-02-03T04:05:06`, basic `YYYYMMDD` / `HHMMSS`). Numbers may be negative,
/// fractional or carry an exponent. None on any syntax error (the caller reports 22007).
fn parse_iso8601(s: &str) -> Option<PgResult<Interval>> {
    const YEAR: (f64, f64, f64) = (12.0, 0.0, 0.0);
    const MONTH: (f64, f64, f64) = (1.0, 0.0, 0.0);
    const DAY: (f64, f64, f64) = (0.0, 1.0, 0.0);
    const HOUR: (f64, f64, f64) = (0.0, 0.0, 3.6e9);
    const MINUTE: (f64, f64, f64) = (0.0, 0.0, 6e7);
    const SECOND: (f64, f64, f64) = (0.0, 0.0, 1e6);
    if s.is_empty() {
        return None;
    }
    let mut acc = (0i128, 0i128, 0i128);
    let mut add = |v: f64, worth| add_unit(v, worth, (&mut acc.0, &mut acc.1, &mut acc.2));
    let b = s.as_bytes();
    let mut i = 0;
    let mut datepart = true;
    let mut havefield = false;
    while i < b.len() {
        if b[i] == b'T' {
            datepart = false;
            havefield = false;
            i += 1;
            continue;
        }
        let start = i;
        let value = iso_number(b, &mut i)?;
        let unit = b.get(i).copied();
        i += 1;
        match (datepart, unit) {
            (true, Some(b'Y')) => add(value, YEAR),
            (true, Some(b'M')) => add(value, MONTH),
            (true, Some(b'W')) => add(value, (0.0, 7.0, 0.0)),
            (true, Some(b'D')) => add(value, DAY),
            (false, Some(b'H')) => add(value, HOUR),
            (false, Some(b'M')) => add(value, MINUTE),
            (false, Some(b'S')) => add(value, SECOND),
            (true, Some(b'T') | None) if !havefield && int_width(&b[start..]) == 8 => {
                // Alternative format, basic: YYYYMMDD.
                let v = value as i64;
                add((v / 10000) as f64, YEAR);
                add((v / 100 % 100) as f64, MONTH);
                add((v % 100) as f64, DAY);
                datepart = false;
                havefield = false;
                continue;
            }
            (false, None) if !havefield && int_width(&b[start..]) == 6 => {
                // Alternative format, basic: HHMMSS.
                let v = value as i64;
                add((v / 10000) as f64, HOUR);
                add((v / 100 % 100) as f64, MINUTE);
                add((v % 100) as f64, SECOND);
                break;
            }
            (true, Some(b'T' | b'-') | None) if !havefield => {
                // Alternative format, extended: Y[-M[-D]] up to the end or the `T`.
                if iso_extended(
                    b,
                    &mut i,
                    value,
                    unit,
                    [YEAR, MONTH, DAY],
                    b'-',
                    Some(b'T'),
                    &mut add,
                )? {
                    datepart = false;
                }
                havefield = false;
                continue;
            }
            (false, Some(b':') | None) if !havefield => {
                // Alternative format, extended: H[:M[:S]] up to the end.
                iso_extended(
                    b,
                    &mut i,
                    value,
                    unit,
                    [HOUR, MINUTE, SECOND],
                    b':',
                    None,
                    &mut add,
                )?;
                break;
            }
            _ => return None,
        }
        havefield = true;
    }
    Some(from_parts(acc.0, acc.1, acc.2))
}

/// The rest of an extended alternative-format group (`Y-M-D` or `H:M:S`) whose first number
/// `value`, ended by `unit`, was just read: each number is worth the next of `worths`, numbers
/// are separated by `sep`, and the group ends at the end of input or at `stop`. Some(true) when
/// it ended at `stop`, None on a syntax error.
#[allow(clippy::too_many_arguments)]
fn iso_extended(
    b: &[u8],
    i: &mut usize,
    value: f64,
    mut unit: Option<u8>,
    worths: [(f64, f64, f64); 3],
    sep: u8,
    stop: Option<u8>,
    add: &mut impl FnMut(f64, (f64, f64, f64)),
) -> Option<bool> {
    for (k, worth) in worths.into_iter().enumerate() {
        if k == 0 {
            add(value, worth);
        } else {
            add(iso_number(b, i)?, worth);
            unit = b.get(*i).copied();
            *i += 1;
        }
        match unit {
            None => return Some(false),
            u if u == stop => return Some(true),
            Some(c) if c == sep && k < 2 => {}
            _ => return None,
        }
    }
    None
}

/// A number as C's strtod reads it (sign `-` only, digits, fraction, exponent), advancing `i`.
fn iso_number(b: &[u8], i: &mut usize) -> Option<f64> {
    let start = *i;
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > s
    };
    if b.get(*i) == Some(&b'-') {
        *i += 1;
    }
    let mut any = digits(i);
    if b.get(*i) == Some(&b'.') {
        *i += 1;
        any |= digits(i);
    }
    if !any {
        return None;
    }
    if matches!(b.get(*i), Some(b'e' | b'E')) {
        let save = *i;
        *i += 1;
        if matches!(b.get(*i), Some(b'+' | b'-')) {
            *i += 1;
        }
        if !digits(i) {
            *i = save;
        }
    }
    std::str::from_utf8(&b[start..*i]).ok()?.parse().ok()
}

/// How many digits the integer part at the start of `b` has (sign excluded).
fn int_width(b: &[u8]) -> usize {
    let b = b.strip_prefix(b"-").unwrap_or(b);
    b.iter().take_while(|c| c.is_ascii_digit()).count()
}

/// Seconds text (`05`, `05.25`) to microseconds.
fn parse_secs(p: &str) -> PgResult<Option<i128>> {
    let (w, f) = p.split_once('.').unwrap_or((p, ""));
    let Ok(w) = w.parse::<i128>() else {
        return Ok(None);
    };
    let mut frac = 0i128;
    for (k, c) in f.chars().enumerate() {
        let Some(d) = c.to_digit(10) else {
            return Ok(None);
        };
        if k < 6 {
            frac += d as i128 * 10i128.pow(5 - k as u32);
        }
    }
    Ok(Some(w * USECS_PER_SEC as i128 + frac))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(s: &str) -> String {
        let mut o = String::new();
        Interval::parse(s).unwrap().write_text(&mut o);
        o
    }

    #[test]
    fn postgres_style() {
        // Each expected value came from PostgreSQL 15.
        assert_eq!(
            rt("1 year 2 months 3 days 04:05:06.789"),
            "1 year 2 mons 3 days 04:05:06.789"
        );
        assert_eq!(rt("-1 day"), "-1 days");
        assert_eq!(rt("-1 day 01:00"), "-1 days +01:00:00");
        assert_eq!(rt("1 day -01:00"), "1 day -01:00:00");
        assert_eq!(rt("0"), "00:00:00");
        assert_eq!(rt("-00:00:01"), "-00:00:01");
        assert_eq!(rt("1.5 days"), "1 day 12:00:00");
        assert_eq!(rt("1.5 months"), "1 mon 15 days");
        assert_eq!(rt("100 hours"), "100:00:00");
        assert_eq!(rt("@ 1 day ago"), "-1 days");
        assert_eq!(rt("5"), "00:00:05");
        assert_eq!(rt("1 week"), "7 days");
        assert_eq!(rt("-1 year -2 mons"), "-1 years -2 mons");
        assert_eq!(rt("1 year -2 mons"), "10 mons");
        assert_eq!(rt("2 days 3 mins"), "2 days 00:03:00");
        assert_eq!(rt("P1Y2M3DT4H5M6S"), "1 year 2 mons 3 days 04:05:06");
        assert_eq!(rt("PT1M"), "00:01:00");
        assert_eq!(rt("P1M"), "1 mon");
        assert_eq!(rt("P2W"), "14 days");
        assert_eq!(rt("P1.5D"), "1 day 12:00:00");
        assert_eq!(rt("PT-1H30M"), "-00:30:00");
        // PostgreSQL 15's answers for the alternative format and the corner cases.
        assert_eq!(rt("PT"), "00:00:00");
        assert_eq!(rt("P1"), "1 year");
        assert_eq!(rt("P1YT"), "1 year");
        assert_eq!(rt("P1DT4"), "1 day 04:00:00");
        assert_eq!(rt("PT4:05"), "04:05:00");
        assert_eq!(rt("P1.5-2"), "1 year 8 mons");
        assert_eq!(rt("P1-2.5"), "1 year 2 mons 15 days");
        assert_eq!(rt("P0.01Y"), "00:00:00");
        assert_eq!(rt("P0.1M"), "3 days");
        assert_eq!(rt("PT1:2:3.5"), "01:02:03.5");
        assert_eq!(rt("PT010203"), "01:02:03");
        assert_eq!(rt("PT1e2S"), "00:01:40");
        assert_eq!(rt("P1T2H"), "1 year 02:00:00");
        assert_eq!(rt("P20240102T010203"), "2024 years 1 mon 2 days 01:02:03");
        assert_eq!(rt("P1-2-3T4:5:6"), "1 year 2 mons 3 days 04:05:06");
        assert_eq!(rt("0.01 years"), "00:00:00");
        assert_eq!(rt("3 4:05:06"), "3 days 04:05:06");
        assert_eq!(rt("3 -4:05:06"), "3 days -04:05:06");
        assert_eq!(rt("-1-2"), "-1 years -2 mons");
        assert_eq!(rt("1-2 3 4:05"), "1 year 2 mons 3 days 04:05:00");
        assert_eq!(rt("1-2 3"), "1 year 2 mons 00:00:03");
        for bad in [
            "P",
            "P1H",
            "PT1D",
            "PxY",
            "p1d",
            "P1d",
            " P1D ",
            "P1Y 2M",
            "P1D4",
            "P1Y2M3DT4H5M6",
            "P1-2-3-4",
            "PT1:2:3:4",
            "P1D\u{e9}",
        ] {
            assert_eq!(Interval::parse(bad).unwrap_err().code, "22007", "{bad}");
        }
        assert_eq!(
            Interval::parse("abc").unwrap_err().message,
            "invalid input syntax for type interval: \"abc\""
        );
        let mut o = String::new();
        Interval::parse("1 mon")
            .unwrap()
            .mul_f64(1.5)
            .unwrap()
            .write_text(&mut o);
        assert_eq!(o, "1 mon 15 days");
    }
}
