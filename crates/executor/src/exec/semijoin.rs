//! Hash semi- and anti-join: `WHERE [NOT] EXISTS (SELECT ... FROM t WHERE t.k = outer.k ...)`
//! run once over the inner side instead of once per outer row. The inner side's keys are
//! hashed on the first call; each outer row passes when its key is in the set (semi) or is not
//! (anti). A NULL key never matches, as `=` on NULL is never true.

use super::discard::discard_in_place;
use super::mem::MemCharge;
use super::{BoxNode, Node, Row, key_of};
use crate::eval::{Eval, EvalCx};
use keel_analyzer::expr::Expr;
use keel_common::PgResult;
use keel_types::TypeId;
use keel_types::datum::alloc_size;
use std::collections::HashSet;
use std::mem::size_of;

pub struct SemiJoin<'a> {
    input: BoxNode<'a>,
    inner: Option<BoxNode<'a>>,
    outer_keys: &'a [Expr],
    inner_keys: &'a [Expr],
    types: Vec<TypeId>,
    anti: bool,
    keys: HashSet<Vec<u8>>,
    buf: Vec<u8>,
    mem: MemCharge,
}

impl<'a> SemiJoin<'a> {
    pub fn new(
        input: BoxNode<'a>,
        inner: BoxNode<'a>,
        (outer_keys, inner_keys): (&'a [Expr], &'a [Expr]),
        anti: bool,
    ) -> Self {
        SemiJoin {
            input,
            inner: Some(inner),
            outer_keys,
            inner_keys,
            types: inner_keys.iter().map(Expr::ty).collect(),
            anti,
            keys: HashSet::new(),
            buf: Vec::new(),
            mem: MemCharge::new("A semi-join's keys"),
        }
    }
}

/// The key of `row` under `exprs`, or false when one is NULL.
fn key(
    exprs: &[Expr],
    types: &[TypeId],
    row: &[keel_types::Datum],
    ev: &mut EvalCx<'_>,
    buf: &mut Vec<u8>,
) -> PgResult<bool> {
    let mut vals = Vec::with_capacity(exprs.len());
    for e in exprs {
        let v = e.eval(row, ev)?;
        if v.is_null() {
            return Ok(false);
        }
        vals.push(v);
    }
    key_of(&vals, types, buf);
    Ok(true)
}

impl<'a> Node<'a> for SemiJoin<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        if let Some(mut inner) = self.inner.take() {
            while let Some(r) = inner.next(ev)? {
                ev.tick()?;
                if key(self.inner_keys, &self.types, &r, ev, &mut self.buf)?
                    && !self.keys.contains(&self.buf)
                {
                    self.mem.add(ev, alloc_size(self.buf.len()))?;
                    self.mem
                        .room_for_one(ev, &mut self.keys, size_of::<Vec<u8>>())?;
                    self.keys.insert(std::mem::take(&mut self.buf));
                }
            }
        }
        while let Some(row) = self.input.next(ev)? {
            ev.tick()?;
            let found = key(self.outer_keys, &self.types, &row, ev, &mut self.buf)?
                && self.keys.contains(&self.buf);
            if found != self.anti {
                return Ok(Some(row));
            }
        }
        Ok(None)
    }
}

impl Drop for SemiJoin<'_> {
    fn drop(&mut self) {
        discard_in_place(&mut self.keys);
    }
}
