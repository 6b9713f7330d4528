//! Projection, with at most one generate_series() in the select list.

use super::values::SeriesState;
use super::{BoxNode, Node, Row};
use crate::eval::{Eval, EvalCx};
use keel_analyzer::expr::Expr;
use keel_common::PgResult;

pub struct Project<'a> {
    input: BoxNode<'a>,
    exprs: &'a [Expr],
    srf: Option<&'a (usize, Expr, Expr, Option<Expr>)>,
    current: Option<(Row, SeriesState)>,
}

impl<'a> Project<'a> {
    pub fn new(
        input: BoxNode<'a>,
        exprs: &'a [Expr],
        srf: Option<&'a (usize, Expr, Expr, Option<Expr>)>,
    ) -> Self {
        Project {
            input,
            exprs,
            srf,
            current: None,
        }
    }
}

impl<'a> Node<'a> for Project<'a> {
    /// A projection is folded into the node below it in EXPLAIN: that node's lines.
    fn explain_lines(&self) -> Vec<String> {
        self.input.explain_lines()
    }

    fn take_row_wait(&mut self) -> Option<keel_access::RowWait> {
        self.input.take_row_wait()
    }

    /// One row out per row in, unless a set-returning function expands rows.
    fn set_bound(&mut self, n: u64) {
        if self.srf.is_none() {
            self.input.set_bound(n);
        }
    }

    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        let Some(srf) = self.srf else {
            let Some(r) = self.input.next(ev)? else {
                return Ok(None);
            };
            let mut out = Vec::with_capacity(self.exprs.len());
            for e in self.exprs {
                out.push(e.eval(&r, ev)?);
            }
            return Ok(Some(out));
        };
        loop {
            if let Some((row, st)) = self.current.as_mut() {
                ev.tick()?;
                if let Some(v) = st.next()? {
                    let mut out = Vec::with_capacity(self.exprs.len());
                    for (i, e) in self.exprs.iter().enumerate() {
                        out.push(if i == srf.0 {
                            v.clone()
                        } else {
                            e.eval(row, ev)?
                        });
                    }
                    return Ok(Some(out));
                }
                self.current = None;
            }
            let Some(r) = self.input.next(ev)? else {
                return Ok(None);
            };
            let ty = self.exprs[srf.0].ty();
            if let Some(st) = SeriesState::open(&srf.1, &srf.2, srf.3.as_ref(), ty, &r, ev)? {
                self.current = Some((r, st));
            }
        }
    }
}
