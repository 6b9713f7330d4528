//! Rows without input: VALUES lists and generate_series in FROM.

use super::{Node, Row};
use crate::expr::{EvalCx, Expr};
use keel_common::{PgError, PgResult, sqlstate};
use keel_types::{Datum, TypeId};

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
        let mut out = Vec::with_capacity(r.len());
        for e in r {
            out.push(e.eval(&[], ev)?);
        }
        Ok(Some(out))
    }
}

/// Integer series state shared with the select-list form.
pub struct SeriesState {
    pub cur: i64,
    pub stop: i64,
    pub step: i64,
    pub ty: TypeId,
}

impl SeriesState {
    pub fn open(
        start: &Expr,
        stop: &Expr,
        step: Option<&Expr>,
        ty: TypeId,
        row: &[Datum],
        ev: &mut EvalCx<'_>,
    ) -> PgResult<Option<SeriesState>> {
        let get = |d: Datum| -> Option<i64> {
            match d {
                Datum::Int4(v) => Some(v as i64),
                Datum::Int8(v) => Some(v),
                Datum::Int2(v) => Some(v as i64),
                _ => None,
            }
        };
        let (Some(a), Some(b)) = (get(start.eval(row, ev)?), get(stop.eval(row, ev)?)) else {
            return Ok(None);
        };
        let s = match step {
            Some(e) => match get(e.eval(row, ev)?) {
                Some(s) => s,
                None => return Ok(None),
            },
            None => 1,
        };
        if s == 0 {
            return Err(PgError::new(
                sqlstate::INVALID_PARAMETER_VALUE,
                "step size cannot equal zero",
            ));
        }
        Ok(Some(SeriesState {
            cur: a,
            stop: b,
            step: s,
            ty,
        }))
    }

    pub fn next(&mut self) -> Option<Datum> {
        if (self.step > 0 && self.cur > self.stop) || (self.step < 0 && self.cur < self.stop) {
            return None;
        }
        let v = self.cur;
        match self.cur.checked_add(self.step) {
            Some(n) => self.cur = n,
            None => self.stop = if self.step > 0 { i64::MIN } else { i64::MAX },
        }
        Some(if self.ty == TypeId::Int8 {
            Datum::Int8(v)
        } else {
            Datum::Int4(v as i32)
        })
    }
}

pub struct Series<'a> {
    start: &'a Expr,
    stop: &'a Expr,
    step: Option<&'a Expr>,
    ty: TypeId,
    state: Option<Option<SeriesState>>,
    n: u32,
}

impl<'a> Series<'a> {
    pub fn new(start: &'a Expr, stop: &'a Expr, step: Option<&'a Expr>, ty: TypeId) -> Self {
        Series {
            start,
            stop,
            step,
            ty,
            state: None,
            n: 0,
        }
    }
}

impl<'a> Node<'a> for Series<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        if self.state.is_none() {
            self.state = Some(SeriesState::open(
                self.start,
                self.stop,
                self.step,
                self.ty,
                &[],
                ev,
            )?);
        }
        self.n = self.n.wrapping_add(1);
        if self.n.is_multiple_of(4096) {
            ev.check_cancel()?;
        }
        Ok(match self.state.as_mut().and_then(|s| s.as_mut()) {
            Some(s) => s.next().map(|d| vec![d]),
            None => None,
        })
    }
}
