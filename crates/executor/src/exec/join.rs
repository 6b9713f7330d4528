//! Inner, left, right and full joins: hash join on equi-keys when the ON clause has them, otherwise a
//! nested loop over the materialized right side. The full ON clause is always evaluated on
//! the joined row.

use super::mem::MemCharge;
use super::{BoxNode, Node, Row, key_of};
use crate::eval::{Eval, EvalCx};
use keel_analyzer::expr::Expr;
use keel_common::PgResult;
use keel_types::datum::{alloc_size, row_heap_bytes};
use keel_types::{Datum, TypeId};
use std::collections::HashMap;
use std::mem::size_of;

pub struct Join<'a> {
    left: BoxNode<'a>,
    right: Option<BoxNode<'a>>,
    on: Option<&'a Expr>,
    left_join: bool,
    right_join: bool,
    left_width: usize,
    right_width: usize,
    /// RIGHT/FULL: which right rows matched; the rest are emitted after the left side ends.
    right_matched: Vec<bool>,
    unmatched_pos: usize,
    hash: Option<&'a (Vec<Expr>, Vec<Expr>)>,
    right_rows: Vec<Row>,
    table: HashMap<Vec<u8>, Vec<usize>>,
    // Current left row and the candidate right rows still to try.
    cur: Option<Row>,
    candidates: Vec<usize>,
    cand_pos: usize,
    matched: bool,
    kbuf: Vec<u8>,
    /// The inner rows and the hash table, held until the join ends.
    mem: MemCharge,
}

impl<'a> Join<'a> {
    pub fn new(
        left: BoxNode<'a>,
        right: BoxNode<'a>,
        on: Option<&'a Expr>,
        (left_join, right_join): (bool, bool),
        (left_width, right_width): (usize, usize),
        hash: Option<&'a (Vec<Expr>, Vec<Expr>)>,
    ) -> Self {
        Join {
            left,
            right: Some(right),
            on,
            left_join,
            right_join,
            left_width,
            right_width,
            right_matched: Vec::new(),
            unmatched_pos: 0,
            hash,
            right_rows: Vec::new(),
            table: HashMap::new(),
            cur: None,
            candidates: Vec::new(),
            cand_pos: 0,
            matched: false,
            kbuf: Vec::new(),
            mem: MemCharge::new("A join's inner rows"),
        }
    }

    fn keys(
        exprs: &[Expr],
        row: &[Datum],
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
        let tys: Vec<TypeId> = exprs.iter().map(Expr::ty).collect();
        key_of(&vals, &tys, buf);
        Ok(true)
    }
}

impl<'a> Node<'a> for Join<'a> {
    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        if let Some(mut right) = self.right.take() {
            while let Some(r) = right.next(ev)? {
                ev.tick()?;
                self.mem.add(
                    ev,
                    row_heap_bytes(&r) + size_of::<Row>() + size_of::<usize>(),
                )?;
                if let Some((_, rk)) = self.hash {
                    let mut buf = Vec::new();
                    if Self::keys(rk, &r, ev, &mut buf)? {
                        let at = self.right_rows.len();
                        match self.table.get_mut(&buf) {
                            Some(v) => v.push(at),
                            None => {
                                self.mem.add(ev, alloc_size(buf.len()) + alloc_size(32))?;
                                self.mem.room_for_one(
                                    ev,
                                    &mut self.table,
                                    size_of::<(Vec<u8>, Vec<usize>)>(),
                                )?;
                                self.table.insert(buf, vec![at]);
                            }
                        }
                    }
                }
                self.right_rows.push(r);
            }
            if self.right_join {
                self.mem.add(ev, self.right_rows.len())?;
                self.right_matched = vec![false; self.right_rows.len()];
            }
        }
        loop {
            if let Some(l) = &self.cur {
                while self.cand_pos < self.candidates.len() {
                    ev.tick()?;
                    let ri = self.candidates[self.cand_pos];
                    self.cand_pos += 1;
                    let mut joined = Vec::with_capacity(l.len() + self.right_width);
                    joined.extend_from_slice(l);
                    joined.extend_from_slice(&self.right_rows[ri]);
                    let ok = match self.on {
                        Some(p) => p.test(&joined, ev)?,
                        None => true,
                    };
                    if ok {
                        self.matched = true;
                        if self.right_join {
                            self.right_matched[ri] = true;
                        }
                        return Ok(Some(joined));
                    }
                }
                let l = self.cur.take();
                if self.left_join
                    && !self.matched
                    && let Some(mut l) = l
                {
                    l.extend(std::iter::repeat_n(Datum::Null, self.right_width));
                    return Ok(Some(l));
                }
            }
            let Some(l) = self.left.next(ev)? else {
                while self.right_join && self.unmatched_pos < self.right_rows.len() {
                    ev.tick()?;
                    let i = self.unmatched_pos;
                    self.unmatched_pos += 1;
                    if !self.right_matched[i] {
                        let mut row = vec![Datum::Null; self.left_width];
                        row.extend_from_slice(&self.right_rows[i]);
                        return Ok(Some(row));
                    }
                }
                return Ok(None);
            };
            ev.tick()?;
            self.matched = false;
            self.cand_pos = 0;
            self.candidates.clear();
            match self.hash {
                Some((lk, _)) => {
                    if Self::keys(lk, &l, ev, &mut self.kbuf)?
                        && let Some(v) = self.table.get(&self.kbuf)
                    {
                        self.candidates.extend_from_slice(v);
                    }
                }
                None => self.candidates.extend(0..self.right_rows.len()),
            }
            self.cur = Some(l);
        }
    }
}

impl Drop for Join<'_> {
    fn drop(&mut self) {
        super::discard::discard_in_place(&mut self.right_rows);
        super::discard::discard_in_place(&mut self.table);
    }
}
