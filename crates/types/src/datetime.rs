//! Dates and timestamps: calendar arithmetic, ISO text I/O (DateStyle ISO, TimeZone UTC).
//!
//! Dates are days since 2000-01-01, timestamps microseconds since 2000-01-01 00:00:00, as in
//! PostgreSQL; `i32::MIN/MAX` and `i64::MIN/MAX` are -infinity/infinity.

use crate::interval::Interval;
use keel_common::{PgError, PgResult, sqlstate};

pub const USECS_PER_SEC: i64 = 1_000_000;
pub const USECS_PER_DAY: i64 = 86_400 * USECS_PER_SEC;
pub const DATE_NEG_INF: i32 = i32::MIN;
pub const DATE_POS_INF: i32 = i32::MAX;
pub const TS_NEG_INF: i64 = i64::MIN;
pub const TS_POS_INF: i64 = i64::MAX;
/// Days from 0000-03-01 (proleptic Gregorian) to 2000-01-01 in the civil algorithm below.
const EPOCH_2000: i64 = 730_425;
/// Microseconds from 1970-01-01 to 2000-01-01.
pub const UNIX_EPOCH_OFFSET_USECS: i64 = 946_684_800 * USECS_PER_SEC;

/// Days since 2000-01-01 of a proleptic Gregorian date (year 0 = 1 BC).
pub fn days_from_ymd(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - EPOCH_2000
}

/// Inverse of [`days_from_ymd`].
pub fn ymd_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + EPOCH_2000;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

pub fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

pub fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ => {
            if is_leap(y) {
                29
            } else {
                28
            }
        }
    }
}

fn push2(out: &mut String, v: u32) {
    out.push((b'0' + (v / 10 % 10) as u8) as char);
    out.push((b'0' + (v % 10) as u8) as char);
}

fn push_year(out: &mut String, y: i64) {
    // Years BC print as their absolute value with a " BC" suffix added by the caller.
    let ay = if y <= 0 { 1 - y } else { y };
    if ay < 10 {
        out.push_str("000");
    } else if ay < 100 {
        out.push_str("00");
    } else if ay < 1000 {
        out.push('0');
    }
    out.push_str(itoa::Buffer::new().format(ay));
}

pub fn format_date(days: i32, out: &mut String) {
    match days {
        DATE_NEG_INF => out.push_str("-infinity"),
        DATE_POS_INF => out.push_str("infinity"),
        _ => {
            let (y, m, d) = ymd_from_days(days as i64);
            push_year(out, y);
            out.push('-');
            push2(out, m);
            out.push('-');
            push2(out, d);
            if y <= 0 {
                out.push_str(" BC");
            }
        }
    }
}

/// Appends `HH:MM:SS[.ffffff]` with trailing fractional zeros removed.
pub fn format_time_of_day(usecs: i64, out: &mut String) {
    let secs = usecs / USECS_PER_SEC;
    let frac = usecs % USECS_PER_SEC;
    push2(out, (secs / 3600) as u32);
    out.push(':');
    push2(out, (secs / 60 % 60) as u32);
    out.push(':');
    push2(out, (secs % 60) as u32);
    push_fraction(out, frac);
}

pub(crate) fn push_fraction(out: &mut String, frac: i64) {
    if frac != 0 {
        let mut f = frac;
        let mut width = 6;
        while f % 10 == 0 {
            f /= 10;
            width -= 1;
        }
        out.push('.');
        let s = itoa::Buffer::new().format(f).to_string();
        for _ in s.len()..width {
            out.push('0');
        }
        out.push_str(&s);
    }
}

pub fn format_timestamp(ts: i64, with_tz: bool, out: &mut String) {
    match ts {
        TS_NEG_INF => out.push_str("-infinity"),
        TS_POS_INF => out.push_str("infinity"),
        _ => {
            let days = ts.div_euclid(USECS_PER_DAY);
            let tod = ts.rem_euclid(USECS_PER_DAY);
            let (y, m, d) = ymd_from_days(days);
            push_year(out, y);
            out.push('-');
            push2(out, m);
            out.push('-');
            push2(out, d);
            out.push(' ');
            format_time_of_day(tod, out);
            if with_tz {
                out.push_str("+00");
            }
            if y <= 0 {
                out.push_str(" BC");
            }
        }
    }
}

fn syntax(ty: &str, s: &str) -> PgError {
    PgError::new(
        sqlstate::INVALID_DATETIME_FORMAT,
        format!("invalid input syntax for type {ty}: \"{s}\""),
    )
}

fn field_overflow(s: &str) -> PgError {
    PgError::new(
        sqlstate::DATETIME_FIELD_OVERFLOW,
        format!("date/time field value out of range: \"{s}\""),
    )
}

/// A small cursor over ASCII input.
struct Cur<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cur<'_> {
    fn digits(&mut self) -> Option<(i64, usize)> {
        let start = self.i;
        let mut v: i64 = 0;
        while self.i < self.b.len() && self.b[self.i].is_ascii_digit() {
            v = v
                .checked_mul(10)?
                .checked_add((self.b[self.i] - b'0') as i64)?;
            self.i += 1;
        }
        if self.i == start {
            None
        } else {
            Some((v, self.i - start))
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.i < self.b.len() && self.b[self.i] == c {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn skip_ws(&mut self) {
        while self.i < self.b.len() && self.b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn rest(&self) -> &str {
        std::str::from_utf8(&self.b[self.i..]).unwrap_or("")
    }
}

/// Parses `YYYY-MM-DD` at the cursor; returns days since 2000-01-01.
fn parse_ymd(c: &mut Cur, ty: &str, s: &str) -> PgResult<(i64, u32, u32)> {
    let (y, ylen) = c.digits().ok_or_else(|| syntax(ty, s))?;
    if ylen == 8 && !c.eat(b'-') {
        // YYYYMMDD
        return Ok((y / 10000, (y / 100 % 100) as u32, (y % 100) as u32));
    }
    if !c.eat(b'-') && !c.eat(b'/') {
        return Err(syntax(ty, s));
    }
    let (m, _) = c.digits().ok_or_else(|| syntax(ty, s))?;
    if !c.eat(b'-') && !c.eat(b'/') {
        return Err(syntax(ty, s));
    }
    let (d, _) = c.digits().ok_or_else(|| syntax(ty, s))?;
    Ok((y, m as u32, d as u32))
}

fn check_ymd(y: i64, m: u32, d: u32, s: &str) -> PgResult<()> {
    // A month or day no calendar has suggests the fields were read in the wrong order
    // (PostgreSQL's DTERR_MD_FIELD_OVERFLOW, with its hint); a day past the month's end is a
    // plain overflow.
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(
            field_overflow(s).with_hint("Perhaps you need a different \"datestyle\" setting.")
        );
    }
    if d > days_in_month(y, m) {
        return Err(field_overflow(s));
    }
    Ok(())
}

/// Optional trailing " BC"/" AD" era marker; converts the year.
fn parse_era(c: &mut Cur, y: i64) -> i64 {
    let save = c.i;
    c.skip_ws();
    let r = c.rest().to_ascii_lowercase();
    if r.starts_with("bc") {
        c.i += 2;
        return 1 - y;
    }
    if r.starts_with("ad") {
        c.i += 2;
        return y;
    }
    c.i = save;
    y
}

/// The first valid date (4714-11-24 BC, Julian day 0) in days since 2000-01-01.
pub const DATE_MIN_DAYS: i64 = -2_451_545;
/// The first date past the range (5874898-01-01, PostgreSQL's DATE_END_JULIAN), in days since
/// 2000-01-01: the last valid date is 5874897-12-31.
pub const DATE_END_DAYS: i64 = 2_147_483_494 - 2_451_545;

pub fn parse_date(s: &str) -> PgResult<i32> {
    let t = s.trim();
    match t.to_ascii_lowercase().as_str() {
        "infinity" | "+infinity" => return Ok(DATE_POS_INF),
        "-infinity" => return Ok(DATE_NEG_INF),
        "epoch" => return Ok(-10957),
        _ => {}
    }
    let mut c = Cur {
        b: t.as_bytes(),
        i: 0,
    };
    let (y, m, d) = parse_ymd(&mut c, "date", s)?;
    let y = parse_era(&mut c, y);
    c.skip_ws();
    if c.i != c.b.len() {
        return Err(syntax("date", s));
    }
    check_ymd(y, m, d, s)?;
    let days = days_from_ymd(y, m, d);
    if !(DATE_MIN_DAYS..DATE_END_DAYS).contains(&days) {
        return Err(PgError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            format!("date out of range: \"{s}\""),
        ));
    }
    Ok(days as i32)
}

/// Parses a timestamp. For `timestamptz` an explicit zone offset is applied (UTC otherwise);
/// for `timestamp` it is ignored, as PostgreSQL does.
pub fn parse_timestamp(s: &str, with_tz: bool) -> PgResult<i64> {
    let ty = if with_tz {
        "timestamp with time zone"
    } else {
        "timestamp"
    };
    let t = s.trim();
    match t.to_ascii_lowercase().as_str() {
        "infinity" | "+infinity" => return Ok(TS_POS_INF),
        "-infinity" => return Ok(TS_NEG_INF),
        "epoch" => return Ok(-UNIX_EPOCH_OFFSET_USECS),
        _ => {}
    }
    let mut c = Cur {
        b: t.as_bytes(),
        i: 0,
    };
    let (y, m, d) = parse_ymd(&mut c, ty, s)?;
    let mut tod: i64 = 0;
    let mut offset_secs: i64 = 0;
    let save = c.i;
    if c.eat(b'T') || c.eat(b't') || {
        c.skip_ws();
        c.i > save && c.i < c.b.len() && c.b[c.i].is_ascii_digit()
    } {
        let (h, _) = c.digits().ok_or_else(|| syntax(ty, s))?;
        if !c.eat(b':') {
            return Err(syntax(ty, s));
        }
        let (mi, _) = c.digits().ok_or_else(|| syntax(ty, s))?;
        let mut sec = 0;
        let mut frac = 0i64;
        if c.eat(b':') {
            sec = c.digits().ok_or_else(|| syntax(ty, s))?.0;
            if c.eat(b'.') {
                let start = c.i;
                let mut f = 0i64;
                let mut n = 0;
                let mut round_up = false;
                while c.i < c.b.len() && c.b[c.i].is_ascii_digit() {
                    if n < 6 {
                        f = f * 10 + (c.b[c.i] - b'0') as i64;
                    } else if n == 6 {
                        round_up = c.b[c.i] >= b'5';
                    }
                    n += 1;
                    c.i += 1;
                }
                if c.i == start {
                    return Err(syntax(ty, s));
                }
                for _ in n.min(6)..6 {
                    f *= 10;
                }
                frac = f + round_up as i64;
            }
        }
        if h > 24 || mi > 59 || sec > 60 || (h == 24 && (mi > 0 || sec > 0 || frac > 0)) {
            return Err(field_overflow(s));
        }
        tod = ((h * 60 + mi) * 60 + sec) * USECS_PER_SEC + frac;
        // Zone: Z, UTC, GMT, +HH, +HH:MM, +HHMM.
        c.skip_ws();
        let r = c.rest().to_ascii_lowercase();
        if r.starts_with('z') {
            c.i += 1;
        } else if r.starts_with("utc") || r.starts_with("gmt") {
            c.i += 3;
        } else if r.starts_with('+') || r.starts_with('-') {
            let neg = r.starts_with('-');
            c.i += 1;
            let (v, len) = c.digits().ok_or_else(|| syntax(ty, s))?;
            let (hh, mm) = if len > 2 { (v / 100, v % 100) } else { (v, 0) };
            let mut off = hh * 3600 + mm * 60;
            if c.eat(b':') {
                off += c.digits().ok_or_else(|| syntax(ty, s))?.0 * 60;
            }
            if hh > 15 {
                return Err(PgError::new(
                    sqlstate::INVALID_DATETIME_FORMAT,
                    format!("time zone displacement out of range: \"{s}\""),
                ));
            }
            offset_secs = if neg { -off } else { off };
        }
    } else {
        c.i = save;
    }
    let y = parse_era(&mut c, y);
    c.skip_ws();
    if c.i != c.b.len() {
        return Err(syntax(ty, s));
    }
    check_ymd(y, m, d, s)?;
    let days = days_from_ymd(y, m, d);
    let mut ts = days
        .checked_mul(USECS_PER_DAY)
        .and_then(|v| v.checked_add(tod))
        .ok_or_else(|| timestamp_out_of_range_input(s))?;
    if with_tz {
        ts -= offset_secs * USECS_PER_SEC;
    }
    // PostgreSQL's range: 4713-11-24 BC up to, not including, 294277-01-01 (END_TIMESTAMP).
    if !(-211_813_488_000_000_000..9_223_371_331_200_000_000).contains(&ts) {
        return Err(timestamp_out_of_range_input(s));
    }
    Ok(ts)
}

fn timestamp_out_of_range_input(s: &str) -> PgError {
    PgError::new(
        sqlstate::DATETIME_FIELD_OVERFLOW,
        format!("timestamp out of range: \"{s}\""),
    )
}

pub fn timestamp_out_of_range() -> PgError {
    PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "timestamp out of range")
}

/// timestamp + interval: months first (clamping the day to the month's end), then days,
/// then microseconds, as PostgreSQL's timestamp_pl_interval.
pub fn timestamp_add_interval(ts: i64, iv: &Interval) -> PgResult<i64> {
    if ts == TS_NEG_INF || ts == TS_POS_INF {
        return Ok(ts);
    }
    let mut ts = ts;
    if iv.months != 0 || iv.days != 0 {
        let days = ts.div_euclid(USECS_PER_DAY);
        let tod = ts.rem_euclid(USECS_PER_DAY);
        let (mut y, mut m, mut d) = ymd_from_days(days);
        if iv.months != 0 {
            let total = y * 12 + (m as i64 - 1) + iv.months as i64;
            y = total.div_euclid(12);
            m = (total.rem_euclid(12) + 1) as u32;
            d = d.min(days_in_month(y, m));
        }
        let days = days_from_ymd(y, m, d) + iv.days as i64;
        ts = days
            .checked_mul(USECS_PER_DAY)
            .and_then(|v| v.checked_add(tod))
            .ok_or_else(timestamp_out_of_range)?;
    }
    ts.checked_add(iv.micros).ok_or_else(timestamp_out_of_range)
}

/// timestamp - timestamp: an interval of days and time (justify_hours applied).
pub fn timestamp_diff(a: i64, b: i64) -> PgResult<Interval> {
    if a == TS_NEG_INF || a == TS_POS_INF || b == TS_NEG_INF || b == TS_POS_INF {
        return Err(PgError::new(
            sqlstate::DATETIME_FIELD_OVERFLOW,
            "cannot subtract infinite timestamps",
        ));
    }
    let diff = a
        .checked_sub(b)
        .ok_or_else(|| PgError::new(sqlstate::DATETIME_FIELD_OVERFLOW, "interval out of range"))?;
    let mut days = diff / USECS_PER_DAY;
    let mut micros = diff - days * USECS_PER_DAY;
    if days > 0 && micros < 0 {
        micros += USECS_PER_DAY;
        days -= 1;
    } else if days < 0 && micros > 0 {
        micros -= USECS_PER_DAY;
        days += 1;
    }
    Ok(Interval {
        months: 0,
        days: days as i32,
        micros,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> String {
        let mut o = String::new();
        format_timestamp(parse_timestamp(s, true).unwrap(), true, &mut o);
        o
    }

    #[test]
    fn civil_round_trip() {
        assert_eq!(days_from_ymd(2000, 1, 1), 0);
        assert_eq!(days_from_ymd(1970, 1, 1), -10957);
        for d in [
            -800_000i64,
            -10957,
            -1,
            0,
            1,
            59,
            60,
            365,
            366,
            10_000,
            2_000_000,
        ] {
            let (y, m, dd) = ymd_from_days(d);
            assert_eq!(days_from_ymd(y, m, dd), d);
        }
    }

    #[test]
    fn text_forms() {
        // From PostgreSQL 15 with TimeZone UTC.
        assert_eq!(
            ts("2026-11-22 10:40:05.123456"),
            "2026-11-22 10:40:05.123456+00"
        );
        assert_eq!(ts("2026-11-22T10:40:05.5+02"), "2026-11-22 08:40:05.5+00");
        assert_eq!(ts("2026-11-22"), "2026-11-22 00:00:00+00");
        assert_eq!(ts("0001-01-01 00:00:00 BC"), "0001-01-01 00:00:00+00 BC");
        assert_eq!(ts("epoch"), "1970-01-01 00:00:00+00");
        let mut o = String::new();
        format_date(parse_date("2024-02-29").unwrap(), &mut o);
        assert_eq!(o, "2024-02-29");
        assert_eq!(parse_date("2023-02-29").unwrap_err().code, "22008");
        // END_TIMESTAMP itself is out of range; the last microsecond before it is not.
        assert_eq!(
            parse_timestamp("294277-01-01", false).unwrap_err().code,
            "22008"
        );
        assert!(parse_timestamp("294276-12-31 23:59:59.999999", false).is_ok());
        assert_eq!(
            parse_date("foo").unwrap_err().message,
            "invalid input syntax for type date: \"foo\""
        );
    }

    #[test]
    fn arithmetic() {
        let a = parse_timestamp("2024-01-31 00:00:00", false).unwrap();
        let b = timestamp_add_interval(
            a,
            &Interval {
                months: 1,
                days: 0,
                micros: 0,
            },
        )
        .unwrap();
        let mut o = String::new();
        format_timestamp(b, false, &mut o);
        assert_eq!(o, "2024-02-29 00:00:00");
        let d = timestamp_diff(b, a).unwrap();
        assert_eq!(
            d,
            Interval {
                months: 0,
                days: 29,
                micros: 0
            }
        );
    }
}
