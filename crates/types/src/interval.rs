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
            let value: f64 = num.parse().map_err(|_| bad())?;
            if unit.is_empty() {
                if i + 1 < tokens.len()
                    && !tokens[i + 1].contains(':')
                    && tokens[i + 1].starts_with(|c: char| c.is_ascii_alphabetic())
                {
                    unit = tokens[i + 1];
                    i += 1;
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
            // Fractions cascade down: fractional months become days (30/month), fractional
            // days become time, as PostgreSQL's AdjustFractDays/AdjustFractSeconds.
            let mv = value * m;
            let whole_m = mv.trunc();
            let dv = value * d + (mv - whole_m) * 30.0;
            let whole_d = dv.trunc();
            let uv = value * us + (dv - whole_d) * USECS_PER_DAY as f64;
            months += whole_m as i128;
            days += whole_d as i128;
            micros += uv.round() as i128;
            i += 1;
        }
        if ago {
            months = -months;
            days = -days;
            micros = -micros;
        }
        Ok(Interval {
            months: i32::try_from(months).map_err(|_| interval_overflow())?,
            days: i32::try_from(days).map_err(|_| interval_overflow())?,
            micros: i64::try_from(micros).map_err(|_| interval_overflow())?,
        })
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
