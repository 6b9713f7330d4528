//! Rows without input: VALUES lists, and the state of a generate_series.

use super::{Node, Row};
use crate::eval::{Eval, EvalCx};
use keel_analyzer::expr::Expr;
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::interval::Interval;
use keel_types::{Datum, TypeId, datetime};

pub struct Values<'a> {
    rows: &'a [Vec<Expr>],
    pos: usize,
}

impl<'a> Values<'a> {
    pub fn new(rows: &'a [Vec<Expr>]) -> Self {
        Values { rows, pos: 0 }
    }
}

impl<'a> Node<'a> for Values<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        let Some(r) = self.rows.get(self.pos) else {
            return Ok(None);
        };
        self.pos += 1;
        ev.tick()?;
        let mut out = Vec::with_capacity(r.len());
        for e in r {
            out.push(e.eval(&[], ev)?);
        }
        Ok(Some(out))
    }
}

/// A generate_series in progress, shared with the select-list form: integers, or timestamps
/// stepped by an interval (timestamp and timestamptz, UTC).
pub enum SeriesState {
    Int {
        cur: i64,
        stop: i64,
        step: i64,
        ty: TypeId,
    },
    Time {
        /// The next value, or the error adding the step raised (reported at its turn).
        cur: PgResult<i64>,
        stop: i64,
        step: Interval,
        forward: bool,
        tz: bool,
    },
}

fn zero_step() -> PgError {
    PgError::new(
        sqlstate::INVALID_PARAMETER_VALUE,
        "step size cannot equal zero",
    )
}

impl SeriesState {
    /// The series over evaluated arguments; None when one is NULL (no rows, as the strict
    /// function). `s` is the step (Int4 1 when the call has none).
    pub fn open(a: Datum, b: Datum, s: Datum, ty: TypeId) -> PgResult<Option<SeriesState>> {
        if a.is_null() || b.is_null() || s.is_null() {
            return Ok(None);
        }
        if matches!(ty, TypeId::Timestamp | TypeId::TimestampTz) {
            let (Datum::Timestamp(a) | Datum::TimestampTz(a)) = a else {
                return Err(PgError::internal("generate_series: timestamp expected"));
            };
            let (Datum::Timestamp(b) | Datum::TimestampTz(b)) = b else {
                return Err(PgError::internal("generate_series: timestamp expected"));
            };
            let Datum::Interval(step) = s else {
                return Err(PgError::internal("generate_series: interval expected"));
            };
            // PostgreSQL compares the step with a zero interval (30-day months, 24-hour days).
            let sign = step.cmp_key();
            if sign == 0 {
                return Err(zero_step());
            }
            return Ok(Some(SeriesState::Time {
                cur: Ok(a),
                stop: b,
                step,
                forward: sign > 0,
                tz: ty == TypeId::TimestampTz,
            }));
        }
        let int = |d: Datum| -> PgResult<i64> {
            match d {
                Datum::Int4(v) => Ok(v as i64),
                Datum::Int8(v) => Ok(v),
                Datum::Int2(v) => Ok(v as i64),
                _ => Err(PgError::internal("generate_series: integer expected")),
            }
        };
        let (a, b, s) = (int(a)?, int(b)?, int(s)?);
        if s == 0 {
            return Err(zero_step());
        }
        Ok(Some(SeriesState::Int {
            cur: a,
            stop: b,
            step: s,
            ty,
        }))
    }

    /// Appends the next value to `out`; false when done. An integer is built in place.
    #[inline]
    pub fn next_into(&mut self, out: &mut Vec<Datum>) -> PgResult<bool> {
        if let SeriesState::Int {
            cur,
            stop,
            step,
            ty,
        } = self
        {
            return Ok(match Self::step_int(cur, stop, *step) {
                Some(v) => {
                    out.push(int_datum(*ty, v));
                    true
                }
                None => false,
            });
        }
        Ok(match self.next()? {
            Some(v) => {
                out.push(v);
                true
            }
            None => false,
        })
    }

    /// An integer series' next value, None past its end. A step past the type's range ends
    /// the series after the value it would overflow from.
    #[inline]
    fn step_int(cur: &mut i64, stop: &mut i64, step: i64) -> Option<i64> {
        if (step > 0 && *cur > *stop) || (step < 0 && *cur < *stop) {
            return None;
        }
        let v = *cur;
        match cur.checked_add(step) {
            Some(n) => *cur = n,
            None => *stop = if step > 0 { i64::MIN } else { i64::MAX },
        }
        Some(v)
    }

    pub fn next(&mut self) -> PgResult<Option<Datum>> {
        match self {
            SeriesState::Int {
                cur,
                stop,
                step,
                ty,
            } => Ok(Self::step_int(cur, stop, *step).map(|v| int_datum(*ty, v))),
            SeriesState::Time {
                cur,
                stop,
                step,
                forward,
                tz,
            } => {
                let v = cur.clone()?;
                if (*forward && v > *stop) || (!*forward && v < *stop) {
                    return Ok(None);
                }
                // Each value is the previous one plus the step, as PostgreSQL's (so 31 Jan
                // + 1 month steps go 29 Feb, 29 Mar, ...).
                *cur = datetime::timestamp_add_interval(v, step);
                Ok(Some(if *tz {
                    Datum::TimestampTz(v)
                } else {
                    Datum::Timestamp(v)
                }))
            }
        }
    }
}

#[inline]
fn int_datum(ty: TypeId, v: i64) -> Datum {
    if ty == TypeId::Int8 {
        Datum::Int8(v)
    } else {
        Datum::Int4(v as i32)
    }
}
