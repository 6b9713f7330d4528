//! Inner, left, right and full joins: hash join on equi-keys when the ON clause has them, otherwise a
//! nested loop over the materialized right side. The ON clause is evaluated on the joined
//! row, unless all of it is the hash keys.
//!
//! The hash table maps a key's encoding to the first and last inner row with that key; the
//! inner rows of one key are chained through `next` in their input order, so a key costs one
//! table entry and no per-key list, and candidates are walked without being copied. A single
//! key of an integer type (the common join on an id) is hashed as the integer itself, with
//! no encoding.

use super::mem::MemCharge;
use super::{BoxNode, Node, Row};
use crate::eval::{Eval, EvalCx};
use keel_access::IntKeys;
use keel_analyzer::expr::Expr;
use keel_common::PgResult;
use keel_types::Datum;
use keel_types::datum::alloc_size;
use rustc_hash::FxHashMap;
use std::mem::size_of;
use std::sync::Arc;

/// End of a candidate chain.
const NONE: usize = usize::MAX;

pub struct Join<'a> {
    /// The probe side; None only while the join is dropped (see `Drop`).
    left: Option<BoxNode<'a>>,
    right: Option<BoxNode<'a>>,
    on: Option<&'a Expr>,
    left_join: bool,
    right_join: bool,
    left_width: usize,
    right_width: usize,
    /// Room each joined row leaves for the values the node above appends.
    extra: usize,
    /// RIGHT/FULL: which right rows matched; the rest are emitted after the left side ends.
    right_matched: Vec<bool>,
    unmatched_pos: usize,
    hash: Option<&'a (Vec<Expr>, Vec<Expr>)>,
    /// The inner rows, one after another (`stored` values each): one allocation for all,
    /// and a probe reads its candidate from one place.
    right_rows: Vec<Datum>,
    /// The inner columns held (None: all), when the inner side is a scan that reads only
    /// those (the others are NULL in every row): each row is stored without its NULL slots,
    /// so the rows a probe jumps between take less memory and cache.
    kept: Option<Vec<usize>>,
    stored: usize,
    /// Inner rows held.
    right_count: usize,
    /// Key encoding -> (first, last) inner row with that key.
    table: FxHashMap<Vec<u8>, (usize, usize)>,
    /// The same for a single integer key (`int_keys`); shared with the probe side's scan
    /// once built (`Node::restrict_to_keys`).
    int_table: Arc<IntTable>,
    int_keys: bool,
    /// Per inner row: the next inner row with the same key (NONE at the chain's end).
    next: Vec<usize>,
    /// The current left row (pulled into this one buffer), whether it is being joined, and
    /// the next candidate right row to try (NONE: no more).
    cur: Row,
    has_cur: bool,
    cand: usize,
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
        kept: Option<Vec<usize>>,
    ) -> Self {
        let kept = kept.filter(|k| k.len() < right_width && k.iter().all(|&c| c < right_width));
        // The planner takes a hash join's keys from the ON clause's `=` conjuncts (equal
        // types on both sides); when every conjunct became a key, a candidate whose key bytes
        // equal the probe's passes the whole clause (keys encode equal exactly when `=` holds).
        let on = match (on, hash) {
            (Some(e), Some((keys, _))) if conjunct_count(e) == keys.len() => None,
            (on, _) => on,
        };
        let mut left = left;
        left.reserve_output(right_width);
        Join {
            left: Some(left),
            right: Some(right),
            on,
            left_join,
            right_join,
            left_width,
            right_width,
            extra: 0,
            right_matched: Vec::new(),
            unmatched_pos: 0,
            hash,
            right_rows: Vec::new(),
            stored: kept.as_ref().map_or(right_width, Vec::len),
            kept,
            right_count: 0,
            table: FxHashMap::default(),
            int_table: Arc::default(),
            int_keys: hash.is_some_and(|(l, r)| {
                l.len() == 1 && r.len() == 1 && l[0].ty() == r[0].ty() && is_int(l[0].ty())
            }),
            next: Vec::new(),
            cur: Vec::new(),
            has_cur: false,
            cand: NONE,
            matched: false,
            kbuf: Vec::new(),
            mem: MemCharge::new("A join's inner rows"),
        }
    }

    /// The key encoding of `row` under `exprs` into `buf`; false when a key is NULL (it
    /// matches nothing). Column references are encoded in place, without a copy.
    fn keys(
        exprs: &[Expr],
        row: &[Datum],
        ev: &mut EvalCx<'_>,
        buf: &mut Vec<u8>,
    ) -> PgResult<bool> {
        buf.clear();
        for e in exprs {
            let mut owned = None;
            let v = key_value(e, row, ev, &mut owned)?;
            if v.is_null() {
                return Ok(false);
            }
            keel_types::key::encode_key_value(v, e.ty(), buf);
        }
        Ok(true)
    }

    /// Reads the inner side whole and, for a hash join, builds the table. Each inner row is
    /// pulled straight onto the end of `right_rows`.
    fn build(&mut self, mut right: BoxNode<'a>, ev: &mut EvalCx<'_>) -> PgResult<()> {
        let mut buf = Vec::new();
        let mut int_table = IntTable::default();
        let slots = self.stored * size_of::<Datum>();
        loop {
            let start = self.right_rows.len();
            if !right.next_into(ev, &mut self.right_rows)? {
                break;
            }
            ev.tick()?;
            let r = &self.right_rows[start..];
            if r.len() != self.right_width {
                return Err(keel_common::PgError::internal(
                    "a join's inner row has an unexpected width",
                ));
            }
            let owned: usize = r.iter().map(Datum::heap_bytes).sum();
            self.mem.add(ev, slots + owned + size_of::<usize>())?;
            let at = self.right_count;
            if let Some((_, rk)) = self.hash {
                self.next.push(NONE);
                if self.int_keys {
                    if let Some(k) = int_key(&rk[0], r, ev)? {
                        if let Some((_, last)) = int_table.0.get_mut(&k) {
                            self.next[*last] = at;
                            *last = at;
                        } else {
                            self.mem.room_for_one(
                                ev,
                                &mut int_table.0,
                                size_of::<(i64, (usize, usize))>(),
                            )?;
                            int_table.0.insert(k, (at, at));
                        }
                    }
                } else if Self::keys(rk, r, ev, &mut buf)? {
                    if let Some((_, last)) = self.table.get_mut(buf.as_slice()) {
                        self.next[*last] = at;
                        *last = at;
                    } else {
                        self.mem.add(ev, alloc_size(buf.len()))?;
                        self.mem.room_for_one(
                            ev,
                            &mut self.table,
                            size_of::<(Vec<u8>, (usize, usize))>(),
                        )?;
                        self.table.insert(buf.clone(), (at, at));
                    }
                }
            }
            if let Some(kept) = &self.kept {
                // Kept columns move to the row's front (each to a slot at or before its own).
                for (k, &c) in kept.iter().enumerate() {
                    self.right_rows.swap(start + k, start + c);
                }
                self.right_rows.truncate(start + kept.len());
            }
            // Each stored value is cloned once per matching outer row.
            self.right_rows[start..].iter_mut().for_each(Datum::unshare);
            self.right_count += 1;
        }
        if self.right_join {
            self.mem.add(ev, self.right_count)?;
            self.right_matched = vec![false; self.right_count];
        }
        self.int_table = Arc::new(int_table);
        // An inner join drops probe rows whose key is not in the table: the probe side's
        // scan may drop them first, before decoding them.
        if self.int_keys
            && !self.left_join
            && let Some((lk, _)) = self.hash
            && let Expr::Col(column, _) = lk[0]
            && let Some(left) = self.left.as_mut()
        {
            let keys: Arc<dyn IntKeys> = self.int_table.clone();
            left.restrict_to_keys(column, &keys);
        }
        Ok(())
    }

    /// Inner row `i`.
    fn right_row(&self, i: usize) -> &[Datum] {
        let w = self.stored;
        &self.right_rows[i * w..(i + 1) * w]
    }

    /// Appends inner row `i`'s values to `out`, NULL in the columns not kept.
    fn push_right(&self, i: usize, out: &mut Row) {
        let row = self.right_row(i);
        let Some(kept) = &self.kept else {
            return out.extend_from_slice(row);
        };
        let start = out.len();
        out.resize_with(start + self.right_width, || Datum::Null);
        for (v, &c) in row.iter().zip(kept) {
            out[start + c] = v.clone();
        }
    }

    /// The candidate after `ri` for the current left row.
    fn after(&self, ri: usize) -> usize {
        if self.hash.is_some() {
            self.next[ri]
        } else if ri + 1 < self.right_count {
            ri + 1
        } else {
            NONE
        }
    }
}

impl<'a> Node<'a> for Join<'a> {
    fn reserve_output(&mut self, extra: usize) {
        self.extra = extra;
        if let Some(left) = self.left.as_mut() {
            left.reserve_output(self.right_width + extra);
        }
    }

    /// A hash join's table, as PostgreSQL prints it on the Hash node: its buckets (the hash
    /// map's slots: hashbrown keeps at most 7 of every 8 in use, and a power of two of
    /// them), one batch (the table is never split to disk), and its memory.
    fn explain_lines(&self) -> Vec<String> {
        match self.hash {
            Some(_) => {
                let cap = if self.int_keys {
                    self.int_table.0.capacity()
                } else {
                    self.table.capacity()
                };
                let buckets = if cap < 8 {
                    (cap + 1).next_power_of_two()
                } else {
                    (cap * 8 / 7).next_power_of_two()
                };
                vec![format!(
                    "Buckets: {buckets}  Batches: 1  Memory Usage: {}kB",
                    self.mem.peak().div_ceil(1024)
                )]
            }
            None => Vec::new(),
        }
    }

    fn next(&mut self, ev: &mut EvalCx<'_>) -> PgResult<Option<Row>> {
        let mut row = Vec::with_capacity(self.left_width + self.right_width + self.extra);
        Ok(self.next_into(ev, &mut row)?.then_some(row))
    }

    /// Builds each joined row in `out`: the left row's values, then the candidate's.
    fn next_into(&mut self, ev: &mut EvalCx<'_>, out: &mut Row) -> PgResult<bool> {
        if let Some(right) = self.right.take() {
            self.build(right, ev)?;
        }
        let start = out.len();
        loop {
            if self.has_cur {
                while self.cand != NONE {
                    ev.tick()?;
                    let ri = self.cand;
                    self.cand = self.after(ri);
                    let last = self.cand == NONE;
                    // The last candidate moves the left row's values instead of copying
                    // them; a failed ON clause moves them back.
                    let lw = self.cur.len();
                    if last {
                        out.append(&mut self.cur);
                    } else {
                        out.extend_from_slice(&self.cur);
                    }
                    self.push_right(ri, out);
                    let ok = match self.on {
                        Some(p) => p.test(&out[start..], ev)?,
                        None => true,
                    };
                    if ok {
                        self.matched = true;
                        if self.right_join {
                            self.right_matched[ri] = true;
                        }
                        // After the last candidate the left row is used up (and matched:
                        // nothing is left to NULL-extend).
                        self.has_cur = !last;
                        return Ok(true);
                    }
                    if last {
                        self.cur.extend(out.drain(start..start + lw));
                    }
                    out.truncate(start);
                }
                self.has_cur = false;
                if self.left_join && !self.matched {
                    out.append(&mut self.cur);
                    out.extend(std::iter::repeat_n(Datum::Null, self.right_width));
                    return Ok(true);
                }
            }
            self.cur.clear();
            let pulled = match self.left.as_mut() {
                Some(left) => left.next_into(ev, &mut self.cur)?,
                None => false,
            };
            if !pulled {
                while self.right_join && self.unmatched_pos < self.right_count {
                    ev.tick()?;
                    let i = self.unmatched_pos;
                    self.unmatched_pos += 1;
                    if !self.right_matched[i] {
                        out.extend(std::iter::repeat_n(Datum::Null, self.left_width));
                        self.push_right(i, out);
                        return Ok(true);
                    }
                }
                return Ok(false);
            }
            ev.tick()?;
            self.matched = false;
            let l = &self.cur;
            self.cand = match self.hash {
                Some((lk, _)) if self.int_keys => match int_key(&lk[0], l, ev)? {
                    Some(k) => self.int_table.0.get(&k).map_or(NONE, |&(first, _)| first),
                    None => NONE,
                },
                Some((lk, _)) => {
                    if Self::keys(lk, l, ev, &mut self.kbuf)? {
                        self.table
                            .get(self.kbuf.as_slice())
                            .map_or(NONE, |&(first, _)| first)
                    } else {
                        NONE
                    }
                }
                None if self.right_count == 0 => NONE,
                None => 0,
            };
            self.has_cur = true;
        }
    }
}

/// Types whose values are one integer, equal exactly when the integers are.
pub(super) fn is_int(ty: keel_types::TypeId) -> bool {
    use keel_types::TypeId::*;
    matches!(
        ty,
        Int2 | Int4 | Int8 | Date | Timestamp | TimestampTz | Oid
    )
}

/// The integer key of `row` under `e` (see `is_int`); None for NULL, which matches nothing.
fn int_key(e: &Expr, row: &[Datum], ev: &mut EvalCx<'_>) -> PgResult<Option<i64>> {
    let mut owned = None;
    Ok(key_value(e, row, ev, &mut owned)?.int_value())
}

/// A key expression's value on `row`: a column in place, without a copy, anything else
/// evaluated into `owned`.
fn key_value<'r>(
    e: &Expr,
    row: &'r [Datum],
    ev: &mut EvalCx<'_>,
    owned: &'r mut Option<Datum>,
) -> PgResult<&'r Datum> {
    Ok(match e {
        Expr::Col(i, _) if *i < row.len() => &row[*i],
        _ => owned.insert(e.eval(row, ev)?),
    })
}

/// Conjuncts of `e` (nested ANDs flattened), as the planner splits an ON clause.
fn conjunct_count(e: &Expr) -> usize {
    match e {
        Expr::And(args) => args.iter().map(conjunct_count).sum(),
        _ => 1,
    }
}

/// A single integer key's hash table: key -> (first, last) inner row with that key.
#[derive(Default)]
struct IntTable(FxHashMap<i64, (usize, usize)>);

impl IntKeys for IntTable {
    fn contains(&self, key: i64) -> bool {
        self.0.contains_key(&key)
    }
}

impl Drop for Join<'_> {
    fn drop(&mut self) {
        super::discard::discard_in_place(&mut self.right_rows);
        super::discard::discard_in_place(&mut self.table);
        // The probe side goes first: its scan may share the integer table.
        drop(self.left.take());
        if let Ok(mut t) = Arc::try_unwrap(std::mem::take(&mut self.int_table)) {
            super::discard::discard_in_place(&mut t.0);
        }
    }
}
