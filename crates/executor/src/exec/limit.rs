//! LIMIT / OFFSET (evaluated once, at the first row; NULL limit = no limit).

use super::{BoxNode, Node, Row};
use crate::eval::{Eval, EvalCx};
use keel_analyzer::expr::Expr;
use keel_common::{PgError, PgResult};
use keel_types::Datum;

pub struct Limit<'a> {
    input: BoxNode<'a>,
    limit: Option<&'a Expr>,
    offset: Option<&'a Expr>,
    state: Option<(u64, Option<u64>)>,
}

impl<'a> Limit<'a> {
    pub fn new(input: BoxNode<'a>, limit: Option<&'a Expr>, offset: Option<&'a Expr>) -> Self {
        Limit {
            input,
            limit,
            offset,
            state: None,
        }
    }
}

fn count(e: Option<&Expr>, ev: &mut EvalCx<'_>, what: &str) -> PgResult<Option<u64>> {
    match e {
        None => Ok(None),
        Some(e) => match e.eval(&[], ev)? {
            Datum::Null => Ok(None),
            Datum::Int8(n) if n >= 0 => Ok(Some(n as u64)),
            _ => Err(PgError::new(
                "2201W",
                format!("{what} must not be negative"),
            )),
        },
    }
}

impl<'a> Node<'a> for Limit<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        if self.state.is_none() {
            let off = count(self.offset, ev, "OFFSET")?.unwrap_or(0);
            let lim = count(self.limit, ev, "LIMIT")?;
            if let Some(n) = lim {
                self.input.set_bound(off.saturating_add(n));
            }
            self.state = Some((off, lim));
        }
        let Some((off, lim)) = self.state.as_mut() else {
            return Ok(None);
        };
        while *off > 0 {
            if self.input.next(ev)?.is_none() {
                return Ok(None);
            }
            *off -= 1;
        }
        match lim {
            Some(0) => Ok(None),
            Some(n) => {
                // Counted once the row is there: an input that suspends (a row lock to
                // await, see `LockRows`) is pulled again.
                let r = self.input.next(ev)?;
                if r.is_some() {
                    *n -= 1;
                }
                Ok(r)
            }
            None => self.input.next(ev),
        }
    }

    fn take_row_wait(&mut self) -> Option<keel_access::RowWait> {
        self.input.take_row_wait()
    }
}
