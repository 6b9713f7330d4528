//! SELECT DISTINCT: first occurrence of each row (compared by key encoding); DISTINCT ON:
//! first occurrence of each value of the `on` expressions.

use super::mem::MemCharge;
use super::{BoxNode, Node, Row, key_of};
use crate::eval::{Eval, EvalCx};
use keel_analyzer::expr::Expr;
use keel_common::PgResult;
use keel_types::TypeId;
use std::collections::HashSet;

pub struct Distinct<'a> {
    input: BoxNode<'a>,
    types: &'a [TypeId],
    on: &'a [Expr],
    seen: SeenSet,
    buf: Vec<u8>,
}

/// The key encodings seen so far, charged to the statement's memory (DISTINCT, UNION,
/// INTERSECT, EXCEPT).
pub(crate) struct SeenSet {
    set: HashSet<Vec<u8>>,
    mem: MemCharge,
}

impl SeenSet {
    /// Frees the keys seen with [`super::discard::discard_in_place`] (off this thread when
    /// there are many).
    pub(crate) fn free(&mut self) {
        super::discard::discard_in_place(&mut self.set);
    }

    pub(crate) fn new(what: &'static str) -> SeenSet {
        SeenSet {
            set: HashSet::new(),
            mem: MemCharge::new(what),
        }
    }

    /// Whether `key` is new (then it is kept).
    pub(crate) fn insert(&mut self, ev: &EvalCx<'_>, key: &[u8]) -> PgResult<bool> {
        if self.set.contains(key) {
            return Ok(false);
        }
        self.mem.add(ev, keel_types::datum::alloc_size(key.len()))?;
        self.mem
            .room_for_one(ev, &mut self.set, std::mem::size_of::<Vec<u8>>())?;
        self.set.insert(key.to_vec());
        Ok(true)
    }
}

impl<'a> Distinct<'a> {
    pub fn new(input: BoxNode<'a>, types: &'a [TypeId], on: &'a [Expr]) -> Self {
        Distinct {
            input,
            types,
            on,
            seen: SeenSet::new("DISTINCT's set of rows seen"),
            buf: Vec::new(),
        }
    }
}

impl<'a> Node<'a> for Distinct<'a> {
    /// Shown as PostgreSQL's HashAggregate; the set of keys seen never spills (one batch).
    fn explain_lines(&self) -> Vec<String> {
        vec![format!(
            "Batches: 1  Memory Usage: {}kB",
            self.seen.mem.peak().div_ceil(1024)
        )]
    }

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
            if self.seen.insert(ev, &self.buf)? {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }
}

impl Drop for Distinct<'_> {
    fn drop(&mut self) {
        self.seen.free();
    }
}
