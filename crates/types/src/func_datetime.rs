//! `date_trunc(text, timestamp | timestamptz | interval)` as PostgreSQL 15's
//! timestamp_trunc / timestamptz_trunc / interval_trunc. The unit is read as PostgreSQL's
//! DecodeUnits does (lower-cased, its first 10 characters looked up among the interval
//! units); TimeZone is UTC, so timestamptz truncates as timestamp does.

use crate::datetime::{days_from_ymd, ymd_from_days};
use crate::interval::Interval;
use crate::{Datum, TypeId};
use keel_common::{PgError, PgResult, sqlstate};

const USECS_PER_DAY: i64 = 86_400_000_000;
const USECS_PER_HOUR: i64 = 3_600_000_000;
const USECS_PER_MINUTE: i64 = 60_000_000;
const USECS_PER_SEC: i64 = 1_000_000;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Unit {
    // From finest to coarsest: truncating to one unit clears every finer field.
    Microsecond,
    Millisecond,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
    /// timezone, timezone_h, timezone_m: units, but not ones a value can be truncated to.
    Timezone,
}

/// PostgreSQL's deltatktbl entries of type UNITS.
fn unit(text: &str) -> Option<Unit> {
    use Unit::*;
    let low: String = text.to_lowercase().chars().take(10).collect();
    Some(match low.as_str() {
        "c" | "cent" | "centuries" | "century" => Century,
        "d" | "day" | "days" => Day,
        "dec" | "decade" | "decades" | "decs" => Decade,
        "h" | "hour" | "hours" | "hr" | "hrs" => Hour,
        "m" | "min" | "mins" | "minute" | "minutes" => Minute,
        "microsecon" | "us" | "usec" | "usecond" | "useconds" | "usecs" => Microsecond,
        "mil" | "millennia" | "millennium" | "mils" => Millennium,
        "millisecon" | "ms" | "msec" | "msecond" | "mseconds" | "msecs" => Millisecond,
        "mon" | "mons" | "month" | "months" => Month,
        "qtr" | "quarter" => Quarter,
        "s" | "sec" | "second" | "seconds" | "secs" => Second,
        "timezone" | "timezone_h" | "timezone_m" => Timezone,
        "w" | "week" | "weeks" => Week,
        "y" | "year" | "years" | "yr" | "yrs" => Year,
        _ => return None,
    })
}

fn lookup(text: &str, ty: TypeId) -> PgResult<Unit> {
    unit(text).ok_or_else(|| {
        PgError::new(
            sqlstate::INVALID_PARAMETER_VALUE,
            format!(
                "unit \"{}\" not recognized for type {}",
                text.to_lowercase(),
                type_label(ty)
            ),
        )
    })
}

fn not_supported(text: &str, ty: TypeId) -> PgError {
    PgError::new(
        sqlstate::FEATURE_NOT_SUPPORTED,
        format!(
            "unit \"{}\" not supported for type {}",
            text.to_lowercase(),
            type_label(ty)
        ),
    )
}

fn type_label(ty: TypeId) -> &'static str {
    match ty {
        TypeId::Timestamp => "timestamp without time zone",
        TypeId::TimestampTz => "timestamp with time zone",
        _ => "interval",
    }
}

/// Truncates `ts` (microseconds since 2000-01-01) to `u`, as timestamp_trunc.
fn trunc_timestamp(ts: i64, u: Unit) -> i64 {
    use Unit::*;
    let days = ts.div_euclid(USECS_PER_DAY);
    let time = ts.rem_euclid(USECS_PER_DAY);
    let (mut y, mut m, mut d) = ymd_from_days(days);
    if u == Week {
        // The Monday on or before the day (2000-01-01 was a Saturday).
        let monday = days - (days + 5).rem_euclid(7);
        return monday * USECS_PER_DAY;
    }
    // PostgreSQL's year arithmetic, on astronomical years (0 = 1 BC): a millennium or
    // century starts at year ...01, a decade at ...0.
    if u == Millennium {
        y = if y > 0 {
            ((y + 999) / 1000) * 1000 - 999
        } else {
            -((999 - (y - 1)) / 1000) * 1000 + 1
        };
    }
    if u == Millennium || u == Century {
        y = if y > 0 {
            ((y + 99) / 100) * 100 - 99
        } else {
            -((99 - (y - 1)) / 100) * 100 + 1
        };
    }
    if u == Decade {
        y = if y > 0 {
            (y / 10) * 10
        } else {
            -((8 - (y - 1)) / 10) * 10
        };
    }
    if u >= Year {
        m = 1;
    }
    if u >= Quarter {
        m = 3 * ((m - 1) / 3) + 1;
    }
    if u >= Month {
        d = 1;
    }
    let unit_usecs = match u {
        Microsecond => 1,
        Millisecond => 1000,
        Second => USECS_PER_SEC,
        Minute => USECS_PER_MINUTE,
        Hour => USECS_PER_HOUR,
        _ => USECS_PER_DAY,
    };
    days_from_ymd(y, m, d) * USECS_PER_DAY + time - time % unit_usecs
}

/// date_trunc(text, timestamp) and (text, timestamptz).
pub(crate) fn date_trunc_timestamp(args: &[Datum]) -> PgResult<Datum> {
    let (text, ts, tz) = match args {
        [Datum::Text(t), Datum::Timestamp(ts)] => (t.as_str(), *ts, false),
        [Datum::Text(t), Datum::TimestampTz(ts)] => (t.as_str(), *ts, true),
        _ => return Err(PgError::internal("date_trunc: unexpected arguments")),
    };
    let ty = if tz {
        TypeId::TimestampTz
    } else {
        TypeId::Timestamp
    };
    let u = lookup(text, ty)?;
    if u == Unit::Timezone {
        return Err(not_supported(text, ty));
    }
    // -infinity and infinity stay as they are.
    let out = if ts == i64::MIN || ts == i64::MAX {
        ts
    } else {
        trunc_timestamp(ts, u)
    };
    Ok(if tz {
        Datum::TimestampTz(out)
    } else {
        Datum::Timestamp(out)
    })
}

/// date_trunc(text, interval), as interval_trunc: the fields are years, months, days, hours,
/// minutes, seconds and microseconds (each carrying the sign of its part), finer ones cleared.
pub(crate) fn date_trunc_interval(args: &[Datum]) -> PgResult<Datum> {
    use Unit::*;
    let [Datum::Text(text), Datum::Interval(iv)] = args else {
        return Err(PgError::internal("date_trunc: unexpected arguments"));
    };
    let u = lookup(text, TypeId::Interval)?;
    let (mut years, mut months) = (iv.months / 12, iv.months % 12);
    let mut days = iv.days;
    let mut micros = iv.micros;
    match u {
        Week => {
            return Err(not_supported(text, TypeId::Interval)
                .with_detail("Months usually have fractional weeks."));
        }
        Timezone => return Err(not_supported(text, TypeId::Interval)),
        Millennium => years = (years / 1000) * 1000,
        Century => years = (years / 100) * 100,
        Decade => years = (years / 10) * 10,
        _ => {}
    }
    if u >= Year {
        months = 0;
    }
    if u >= Quarter {
        months = 3 * (months / 3);
    }
    if u >= Month {
        days = 0;
    }
    let unit_usecs = match u {
        Microsecond => 1,
        Millisecond => 1000,
        Second => USECS_PER_SEC,
        Minute => USECS_PER_MINUTE,
        Hour => USECS_PER_HOUR,
        _ => i64::MAX,
    };
    // Truncation toward zero, as the time fields carry the sign of the whole time part.
    micros = if unit_usecs == i64::MAX {
        0
    } else {
        micros - micros % unit_usecs
    };
    Ok(Datum::Interval(Interval {
        months: years * 12 + months,
        days,
        micros,
    }))
}
