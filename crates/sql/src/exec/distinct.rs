//! SELECT DISTINCT: first occurrence of each row (compared by key encoding); DISTINCT ON:
//! first occurrence of each value of the `on` expressions.

use super::{BoxNode, Node, Row, key_of};
use crate::expr::{EvalCx, Expr};
use keel_common::PgResult;
use keel_types::TypeId;
use std::collections::HashSet;

pub struct Distinct<'a> {
    input: BoxNode<'a>,
    types: &'a [TypeId],
    on: &'a [Expr],
    seen: HashSet<Vec<u8>>,
    buf: Vec<u8>,
}

impl<'a> Distinct<'a> {
    pub fn new(input: BoxNode<'a>, types: &'a [TypeId], on: &'a [Expr]) -> Self {
        Distinct {
            input,
            types,
            on,
            seen: HashSet::new(),
            buf: Vec::new(),
        }
    }
}

impl<'a> Node<'a> for Distinct<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        while let Some(r) = self.input.next(ev)? {
            ev.tick()?;
            if self.on.is_empty() {
                key_of(&r, self.types, &mut self.buf);
            } else {
                let mut k = Vec::with_capacity(self.on.len());
                for e in self.on {
                    k.push(e.eval(&r, ev)?);
                }
                key_of(&k, self.types, &mut self.buf);
            }
            if self.seen.insert(self.buf.clone()) {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }
}

impl Drop for Distinct<'_> {
    fn drop(&mut self) {
        super::discard::discard_in_place(&mut self.seen);
    }
}
