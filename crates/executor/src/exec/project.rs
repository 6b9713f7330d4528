//! Projection, expanding rows by the select list's set-returning calls when it has any.

use super::table_func::SetExpansion;
use super::{BoxNode, Node, Row};
use crate::eval::{Eval, EvalCx};
use keel_analyzer::expr::Expr;
use keel_analyzer::srf::ProjectSet;
use keel_common::PgResult;
use keel_types::Datum;

/// [`Project::moves`] for `exprs`: the plain column references whose column no other
/// expression reads, so taking it out of the row cannot change another's value. None for
/// all when an expression runs a subplan (it may read the row in ways not seen here).
fn moves(exprs: &[Expr]) -> Vec<Option<usize>> {
    fn count(e: &Expr, uses: &mut Vec<u32>) {
        if let Expr::Col(i, _) = e {
            if uses.len() <= *i {
                uses.resize(*i + 1, 0);
            }
            uses[*i] += 1;
        }
        e.for_each_child(&mut |c| count(c, uses));
    }
    if exprs.iter().any(Expr::has_subplan) {
        return vec![None; exprs.len()];
    }
    let mut uses = Vec::new();
    for e in exprs {
        count(e, &mut uses);
    }
    exprs
        .iter()
        .map(|e| match e {
            Expr::Col(i, _) if uses[*i] == 1 => Some(*i),
            _ => None,
        })
        .collect()
}

pub struct Project<'a> {
    input: BoxNode<'a>,
    exprs: &'a [Expr],
    /// Per output expression: the input column it moves out of the input row (the column is
    /// a plain reference that no other expression reads), instead of copying it.
    moves: Vec<Option<usize>>,
    srf: Option<&'a ProjectSet>,
    current: Option<(Row, SetExpansion)>,
}

impl<'a> Project<'a> {
    pub fn new(input: BoxNode<'a>, exprs: &'a [Expr], srf: Option<&'a ProjectSet>) -> Self {
        Project {
            input,
            moves: if srf.is_some() {
                vec![None; exprs.len()]
            } else {
                moves(exprs)
            },
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
            let Some(mut r) = self.input.next(ev)? else {
                return Ok(None);
            };
            let mut out = Vec::with_capacity(self.exprs.len());
            for (e, m) in self.exprs.iter().zip(&self.moves) {
                match m {
                    Some(i) if *i < r.len() => out.push(std::mem::replace(&mut r[*i], Datum::Null)),
                    _ => {
                        out.push(Datum::Null);
                        if let Some(slot) = out.last_mut() {
                            e.eval_into(&r, ev, slot)?;
                        }
                    }
                }
            }
            return Ok(Some(out));
        };
        loop {
            if let Some((row, st)) = self.current.as_mut() {
                if let Some(vals) = st.next(ev)? {
                    // The calls' values follow the input row, last call first (see
                    // `Special::SetValue`).
                    let mut ext = Vec::with_capacity(row.len() + vals.len());
                    ext.extend_from_slice(row);
                    ext.extend(vals.into_iter().rev());
                    let mut out = Vec::with_capacity(self.exprs.len());
                    for e in self.exprs {
                        out.push(e.eval(&ext, ev)?);
                    }
                    return Ok(Some(out));
                }
                self.current = None;
            }
            let Some(r) = self.input.next(ev)? else {
                return Ok(None);
            };
            let st = SetExpansion::open(&srf.funcs, &r, ev)?;
            self.current = Some((r, st));
        }
    }
}
