//! Filter: passes rows for which the predicate is TRUE.

use super::{BoxNode, Node, Row};
use crate::eval::{Eval, EvalCx};
use keel_analyzer::expr::Expr;
use keel_common::PgResult;

pub struct Filter<'a> {
    pub input: BoxNode<'a>,
    pub pred: &'a Expr,
}

impl<'a> Node<'a> for Filter<'a> {
    /// A filter is shown on the node below it in EXPLAIN: that node's lines.
    fn explain_lines(&self) -> Vec<String> {
        self.input.explain_lines()
    }

    fn reserve_output(&mut self, extra: usize) {
        self.input.reserve_output(extra)
    }

    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        while let Some(r) = self.input.next(ev)? {
            ev.tick()?;
            if self.pred.test(&r, ev)? {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }

    fn next_into(&mut self, ev: &mut EvalCx<'_>, out: &mut Row) -> PgResult<bool> {
        let start = out.len();
        while self.input.next_into(ev, out)? {
            ev.tick()?;
            if self.pred.test(&out[start..], ev)? {
                return Ok(true);
            }
            out.truncate(start);
        }
        Ok(false)
    }
}
