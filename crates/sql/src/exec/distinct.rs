//! SELECT DISTINCT: first occurrence of each row (compared by key encoding).

use super::{BoxNode, Node, Row, key_of};
use crate::expr::EvalCx;
use keel_common::PgResult;
use keel_types::TypeId;
use std::collections::HashSet;

pub struct Distinct<'a> {
    input: BoxNode<'a>,
    types: &'a [TypeId],
    seen: HashSet<Vec<u8>>,
    buf: Vec<u8>,
}

impl<'a> Distinct<'a> {
    pub fn new(input: BoxNode<'a>, types: &'a [TypeId]) -> Self {
        Distinct {
            input,
            types,
            seen: HashSet::new(),
            buf: Vec::new(),
        }
    }
}

impl<'a> Node<'a> for Distinct<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        while let Some(r) = self.input.next(ev)? {
            key_of(&r, self.types, &mut self.buf);
            if self.seen.insert(self.buf.clone()) {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }
}
