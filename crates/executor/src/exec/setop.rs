//! UNION / INTERSECT / EXCEPT [ALL]. UNION ALL streams; the others hash rows by their key
//! encoding (so NULLs compare equal, as set operations require).

use super::distinct::SeenSet;
use super::mem::MemCharge;
use super::{BoxNode, Node, Row, key_of};
use crate::eval::EvalCx;
use keel_common::PgResult;
use keel_planner::plan::SetOpKind;
use keel_types::TypeId;
use keel_types::datum::alloc_size;
use std::collections::HashMap;

pub struct SetOp<'a> {
    left: BoxNode<'a>,
    right: Option<BoxNode<'a>>,
    kind: SetOpKind,
    all: bool,
    types: &'a [TypeId],
    /// UNION: rows seen. INTERSECT/EXCEPT: right-side counts.
    seen: SeenSet,
    counts: HashMap<Vec<u8>, usize>,
    counts_mem: MemCharge,
    left_done: bool,
    buf: Vec<u8>,
}

impl<'a> SetOp<'a> {
    pub fn new(
        left: BoxNode<'a>,
        right: BoxNode<'a>,
        kind: SetOpKind,
        all: bool,
        types: &'a [TypeId],
    ) -> Self {
        SetOp {
            left,
            right: Some(right),
            kind,
            all,
            types,
            seen: SeenSet::new("A set operation's set of rows seen"),
            counts: HashMap::new(),
            counts_mem: MemCharge::new("A set operation's table of right-hand rows"),
            left_done: false,
            buf: Vec::new(),
        }
    }
}

impl<'a> Node<'a> for SetOp<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        if self.kind == SetOpKind::Union {
            loop {
                ev.tick()?;
                let r = if !self.left_done {
                    match self.left.next(ev)? {
                        Some(r) => r,
                        None => {
                            self.left_done = true;
                            continue;
                        }
                    }
                } else {
                    match self.right.as_mut() {
                        Some(n) => match n.next(ev)? {
                            Some(r) => r,
                            None => return Ok(None),
                        },
                        None => return Ok(None),
                    }
                };
                if self.all {
                    return Ok(Some(r));
                }
                key_of(&r, self.types, &mut self.buf);
                if self.seen.insert(ev, &self.buf)? {
                    return Ok(Some(r));
                }
            }
        }
        if let Some(mut right) = self.right.take() {
            while let Some(r) = right.next(ev)? {
                ev.tick()?;
                key_of(&r, self.types, &mut self.buf);
                if let Some(n) = self.counts.get_mut(&self.buf) {
                    *n += 1;
                    continue;
                }
                self.counts_mem.add(ev, alloc_size(self.buf.len()))?;
                self.counts_mem.room_for_one(
                    ev,
                    &mut self.counts,
                    std::mem::size_of::<(Vec<u8>, usize)>(),
                )?;
                self.counts.insert(self.buf.clone(), 1);
            }
        }
        while let Some(r) = self.left.next(ev)? {
            ev.tick()?;
            key_of(&r, self.types, &mut self.buf);
            let in_right = self.counts.get_mut(&self.buf);
            let emit = match (self.kind, self.all) {
                (SetOpKind::Intersect, true) => match in_right {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        true
                    }
                    _ => false,
                },
                (SetOpKind::Intersect, false) => {
                    in_right.is_some() && self.seen.insert(ev, &self.buf)?
                }
                (SetOpKind::Except, true) => match in_right {
                    Some(n) if *n > 0 => {
                        *n -= 1;
                        false
                    }
                    _ => true,
                },
                _ => in_right.is_none() && self.seen.insert(ev, &self.buf)?,
            };
            if emit {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }
}

impl Drop for SetOp<'_> {
    fn drop(&mut self) {
        self.seen.free();
        super::discard::discard_in_place(&mut self.counts);
    }
}
